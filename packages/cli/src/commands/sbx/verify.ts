// `sbx verify <record>`: a run record verified from files alone (sandbox-attest §13.9).
import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { FileStore, isHeadArg, verifyRecordFiles, type FilesReport } from "@sbx/host/store";
import { EXIT, parseOptions, printJson, UsageError, type Command, type Io } from "../../command.ts";

const help = `usage: sbx verify <record.runrecord> [--store DIR | --record-only] [--head DIGEST] [--host DID]… [--json]
  Verifies a durable run record (sandbox-attest §13) from files alone: the record's wire form, every
  head from genesis, phase alternation, snapshot identity at every resume; then every object the
  record references that the store holds: attestations (signature, unit and grant set, cited head),
  energy receipts, snapshot trees (every directory and file re-hashed), memory images, manifests.
  Prints segments, phases, energy (active + idle = total) and the verdict; missing objects are listed.
  --store DIR     the store the record points into (default: the store the record file lives in)
  --record-only   check the record file alone, no objects
  --head DIGEST   the head the record must end at (catches a record cut back at a segment boundary)
  --host DID      every attestation must be signed by one of these hosts (repeatable)
  --json          print the full report as JSON
exit: 0 valid, 1 invalid (the code names what broke), 2 usage error, unreadable record or no store`;

function findStore(recordPath: string, given: string | undefined): string | null {
  if (given !== undefined) return given;
  const root = dirname(dirname(resolve(recordPath)));
  return basename(dirname(resolve(recordPath))) === "records" && existsSync(join(root, "sbx-store"))
    ? root
    : null;
}

function printReport(r: FilesReport, io: Io): void {
  io.out(`run record  unit ${r.unit_id ?? "?"}  grants ${r.grants_id ?? "?"}`);
  for (const s of r.segments) io.out(`  ${String(s.n).padStart(3)} ${s.kind.padEnd(9)} ${s.detail}`);
  if (r.head !== null) io.out(`head ${r.head}  phase ${r.phase ?? "?"}`);
  const p = r.phases;
  io.out(
    `segments ${r.segments.length}: executed ${p.executed}, suspended ${p.suspended}, resumed ${p.resumed}, closed ${p.closed}`,
  );
  if (r.energy !== null) {
    const e = r.energy;
    io.out(
      `energy: active ${e.active_uj} µJ + idle ${e.idle_uj} µJ = total ${e.total_uj} µJ${e.complete ? "" : ` (lower bound: ${e.unresolved.length} attestation(s) not in the store)`}`,
    );
    io.out(
      `  idle by provenance: measured ${e.idle_by_provenance.measured}, attributed ${e.idle_by_provenance.attributed}, estimated ${e.idle_by_provenance.estimated}`,
    );
  }
  const c = r.checked;
  io.out(
    `checked: ${c.attestations} attestations, ${c.receipts} receipts, ${c.trees} snapshot trees, ${c.objects} other objects`,
  );
  for (const m of r.missing) io.out(`  not in store: ${m}`);
  io.out(
    r.valid
      ? "verdict: VALID"
      : `verdict: INVALID  ${r.error?.code ?? ""}: ${r.error?.message.replace(/^\w+: /, "") ?? ""}`,
  );
}

export const command: Command = {
  name: "verify",
  summary: "verify a durable run record and the objects it references, from files alone",
  help,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      store: { type: "string" },
      "record-only": { type: "boolean" },
      head: { type: "string" },
      host: { type: "string", multiple: true },
      json: { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("exactly one record file is required");
    const path = positionals[0]!;
    if (!existsSync(path) || !statSync(path).isFile()) throw new UsageError(`${path} is not a readable file`);
    if (values.head !== undefined && !isHeadArg(values.head))
      throw new UsageError("--head must be a blake3:<64 hex> digest");
    let store: FileStore | null = null;
    if (values["record-only"] !== true) {
      const root = findStore(path, values.store);
      if (root === null)
        throw new UsageError("no store found beside the record: pass --store DIR or --record-only");
      try {
        store = FileStore.open(root, { readOnly: true });
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
    }
    const report = verifyRecordFiles(path, store, {
      ...(values.head !== undefined ? { expectHead: values.head } : {}),
      ...(values.host ? { hosts: values.host } : {}),
    });
    if (values.json === true) printJson(io, report);
    else printReport(report, io);
    return Promise.resolve(report.valid ? EXIT.ok : EXIT.invalid);
  },
};
