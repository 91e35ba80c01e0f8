// `sbx verify <record>`: a run record verified from files alone (sandbox-attest §13.9).
import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { FileStore, isHeadArg, reportOf, verifyRecordFiles, type FilesReport } from "@sbx/host/store";
import { verifyPgRun } from "@sbx/host/pg";
import { EXIT, parseOptions, printJson, UsageError, type Command, type Io } from "../../command.ts";
import { CliError } from "../../errors.ts";
import { runRecordPath } from "@sbx/host/durable";
import { namesRun, resolvePgRun, runStoreUrl, withPg } from "@sbx/host/stores";
import { TRUST_HELP, TRUST_OPTIONS, trustedOption, trustOf, verdict, type Trust } from "../../trust.ts";

const help = `usage: sbx verify RUN|<record.runrecord> (--trust FILE|DID… | --any-signer) [--store DIR | --record-only]
                  [--head DIGEST] [--json]
  Verifies a durable run record (sandbox-attest §13) from files alone: the record's wire form, every
  head from genesis, phase alternation, snapshot identity at every resume; then every object the
  record references that the store holds: attestations (every signature, by a trusted host, unit and
  grant set, cited head), signed energy receipts (every signature, by the attestation's host, bound
  to it: §7.5), snapshot trees (every directory and file re-hashed), memory images, manifests; last,
  every journal the store keeps for the run, walked node by node from the root its attestation signs
  (§13.7.3: ObjectMismatch, ObjectMissing, JournalRootMismatch; a journal absent beside a kept one is
  ObjectMissing).
  Prints segments, phases, energy (active + idle = total), the signers and the verdict: VALID, or
  UNTRUSTED with --any-signer; missing objects are listed.
${TRUST_HELP}
  --host DID      the same as --trust (older name)
  RUN             a run's id (blake3:…) or a unique prefix of it, with or without blake3:, as sbx show
                  takes it (RunNotFound, RunAmbiguous: exit 2); a path that exists is a record file
  --store DIR     the store the record points into (default: the store the record file lives in);
                  for a RUN, the run store that holds it (default $SBX_STORE, XDG); a postgres://
                  store is read and verified in the database itself
  --record-only   check the record file alone, no objects
  --head DIGEST   the head the record must end at (catches a record cut back at a segment boundary)
  --json          print the full report as JSON ({valid, trusted, signers, …})
exit: 0 valid (or UNTRUSTED with --any-signer), 1 invalid (the code names what broke), 2 usage error
      (no --trust), unreadable record, unknown or ambiguous RUN, or no store`;

function findStore(recordPath: string, given: string | undefined): string | null {
  if (given !== undefined) return given;
  const root = dirname(dirname(resolve(recordPath)));
  return basename(dirname(resolve(recordPath))) === "records" && existsSync(join(root, "sbx-store"))
    ? root
    : null;
}

function printReport(r: FilesReport, t: Trust, io: Io): void {
  io.out(`run record  unit ${r.unit_id ?? "?"}  grants ${r.grants_id ?? "?"}`);
  for (const s of r.segments) io.out(`  ${String(s.n).padStart(3)} ${s.kind.padEnd(9)} ${s.detail}`);
  if (r.head !== null) io.out(`head ${r.head}  phase ${r.phase ?? "?"}`);
  const p = r.phases;
  io.out(
    `segments ${r.segments.length}: executed ${p.executed}, suspended ${p.suspended}, resumed ${p.resumed}, closed ${p.closed}${p.moved > 0 ? `, moved ${p.moved} (handed off: not resumable in this store)` : ""}`,
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
    `checked: ${c.attestations} attestations, ${c.receipts} receipts, ${c.trees} snapshot trees, ${c.objects} other objects, ${c.journals} journals (${c.events} events)`,
  );
  for (const m of r.missing) io.out(`  not in store: ${m}`);
  io.out(
    `signers: ${r.signers.join(", ") || "none"}${t.keys === null ? " (none trusted: --any-signer)" : ""}`,
  );
  io.out(
    r.valid
      ? `verdict: ${verdict(t)}`
      : `verdict: INVALID  ${r.error?.code ?? ""}: ${r.error?.message ?? ""}`,
  );
}

export const command: Command = {
  name: "verify",
  summary: "verify a durable run record and the objects it references, from files alone",
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      store: { type: "string" },
      "record-only": { type: "boolean" },
      head: { type: "string" },
      host: { type: "string", multiple: true },
      json: { type: "boolean" },
      ...TRUST_OPTIONS,
    });
    if (positionals.length !== 1) throw new UsageError("exactly one RUN or record file is required");
    const trust = trustOf(values, values.host);
    if (values.head !== undefined && !isHeadArg(values.head))
      throw new UsageError("--head must be a blake3:<64 hex> digest");
    const opts = {
      ...(values.head !== undefined ? { expectHead: values.head } : {}),
      ...trustedOption(trust, "hosts"),
    };
    // A run (its id as sbx run printed it, or a unique prefix: the rule of sbx show, runref.ts) names
    // the record in the run store (--store, $SBX_STORE, XDG). With a PostgreSQL run store, the run is
    // read and verified from the database itself (pgruns.ts).
    const arg = positionals[0]!;
    const url = namesRun(arg) ? runStoreUrl(values.store) : null;
    if (url !== null) {
      const report = await withPg(url, async (pg) => {
        const id = await resolvePgRun(pg, arg);
        return reportOf((await verifyPgRun(pg, id, opts, values["record-only"] === true)).run);
      });
      return done(report, trust, values.json === true, io);
    }
    const path = runRecordPath(arg, values.store);
    if (!existsSync(path)) throw new CliError("Unreadable", `cannot read record ${path}: no such file`);
    if (!statSync(path).isFile()) throw new CliError("NotAFile", `record ${path} is not a file`);
    let store: FileStore | null = null;
    if (values["record-only"] !== true) {
      const root = findStore(path, values.store);
      if (root === null)
        throw new UsageError("no store found beside the record: pass --store DIR or --record-only");
      try {
        store = FileStore.open(root, { readOnly: true });
      } catch (e) {
        throw new CliError("Unreadable", `cannot open store ${root}: ${(e as Error).message}`, { cause: e });
      }
    }
    return done(verifyRecordFiles(path, store, opts), trust, values.json === true, io);
  },
};

function done(report: FilesReport, trust: Trust, json: boolean, io: Io): number {
  if (json) printJson(io, { ...report, trusted: report.valid && trust.keys !== null });
  else printReport(report, trust, io);
  return report.valid ? EXIT.ok : EXIT.invalid;
}
