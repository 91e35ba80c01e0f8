// `sbx runs` and `sbx show RUN`: the runs of the run store, each verified from genesis (§13.9) with
// the objects the store holds, with phase, segments and energy so far (§13.6: receipts + idle).
import { reportOf, storeObjects, type FileStore } from "@sbx/host/store";
import { verifyRun, type RunVerification } from "@sbx/sandbox-attest/store";
import { isUngoverned } from "@sbx/jcp-grant/grant";
import type { Digest } from "@sbx/wire";
import { EXIT, parseOptions, printJson, UsageError, type Command, type Io } from "../../command.ts";
import { redactUrl, verifyPgRun } from "@sbx/host/pg";
import { resolvePgRun, withPg } from "@sbx/host/stores";
import { resolveRun } from "@sbx/host/stores";
import { NO_GRANTS } from "../../report/grants.ts";
import { readableRunStore, runStoreUrl } from "@sbx/host/stores";
import { supervisorState, supervisorText, type SupervisorState } from "@sbx/host/durable";

const STORE_HELP = `  --store DIR       the run store (default: $SBX_STORE, else $XDG_DATA_HOME/sbx or ~/.local/share/sbx);
                    a postgres:// connection string reads and verifies each run in that database itself
                    (nothing is copied into a local store)`;

function verifyStored(store: FileStore, id: Digest): RunVerification {
  return verifyRun(store.readRunSync(id).bytes, storeObjects(store), { expectId: id });
}

/** One run as the list shows it; `sup`: its supervisor on this host (§13.7.4), where known. */
function summary(id: Digest, v: RunVerification, sup: SupervisorState | null = null) {
  const r = v.record;
  const e = v.energy;
  return {
    id,
    valid: v.valid,
    error: v.error?.code ?? null,
    phase: r?.phase ?? null,
    moved_to: r?.movedTo ?? null,
    segments: r?.segments.length ?? 0,
    head: r?.head ?? null,
    energy_uj: e?.total_uj ?? null,
    idle_uj: e?.idle_uj ?? null,
    energy_complete: e?.complete ?? false,
    supervisor: sup,
  };
}

const runs: Command = {
  name: "runs",
  summary: "list the runs of the run store with phase, segments and energy so far",
  help: `usage: sbx runs [--store DIR] [--json]
  Lists every run in the run store: its id, phase (active, parked, closed, or moved: handed off to
  another store by \`sbx export --move\`, named after the energy), number of segments, and
  energy so far (receipts + idle, µJ; "≥" when an attestation is not in the store). Each record is
  verified from genesis with the objects the store holds, the journals it keeps included (§13.7.3);
  one that does not verify is listed as INVALID with its code.
${STORE_HELP}
  A run whose supervisor on this host is gone (its pid and start time no longer name a live
  process, §13.7.4) is said so: "supervisor gone (pid N)".
  --json            print a JSON array of {id, valid, error, phase, moved_to, segments, head, energy_uj, idle_uj, energy_complete,
                    supervisor}
exit: 0 listed (all valid), 1 some run does not verify, 2 usage error or unusable store`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      store: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length !== 0) throw new UsageError("sbx runs takes no arguments");
    // On PostgreSQL each run is read and verified from the database itself (pgruns.ts).
    const url = runStoreUrl(values.store);
    let where: string;
    let rows: ReturnType<typeof summary>[];
    if (url !== null) {
      where = redactUrl(url);
      rows = await withPg(url, async (pg) => {
        const out = [];
        for (const id of await pg.listRecords()) out.push(summary(id, (await verifyPgRun(pg, id)).run));
        return out;
      });
    } else {
      const { store, done } = await readableRunStore(values.store, null);
      await done();
      where = store.root;
      rows = store.recordIds().map((id) => {
        const v = verifyStored(store, id);
        return summary(id, v, supervisorState(store.root, id, v.record?.head ?? null));
      });
    }
    if (values.json === true) printJson(io, rows);
    else {
      io.out(`${"run".padEnd(24)} ${"phase".padEnd(7)} ${"segments".padStart(8)}  energy (µJ)`);
      for (const r of rows)
        io.out(
          `${r.id.slice(0, 24)} ${(r.phase ?? "INVALID").padEnd(7)} ${String(r.segments).padStart(8)}  ${r.valid ? `${r.energy_complete ? "" : "≥ "}${r.energy_uj} (idle ${r.idle_uj})` : `INVALID ${r.error}`}${r.moved_to === null ? "" : `  moved to ${JSON.stringify(r.moved_to)}`}${supervisorText(r.supervisor) === null ? "" : `  ${supervisorText(r.supervisor) ?? ""}`}`,
        );
      if (rows.length === 0) io.out(`(no runs in ${where})`);
    }
    return rows.every((r) => r.valid) ? EXIT.ok : EXIT.invalid;
  },
};

function printShow(io: Io, id: Digest, v: RunVerification, sup: SupervisorState | null): void {
  const rep = reportOf(v);
  io.out(`run ${id}  phase ${rep.phase ?? "?"}  head ${rep.head ?? "?"}`);
  const said = supervisorText(sup);
  if (said !== null) io.out(said);
  io.out(`unit ${rep.unit_id ?? "?"}  grants ${rep.grants_id ?? "?"}`);
  const moved = v.record?.segments.at(-1);
  if (moved?.kind === "moved")
    io.out(
      `moved to ${JSON.stringify(moved.to)} at head ${moved.head}, signed by ${moved.signer}: not resumable here`,
    );
  if (rep.grants_id !== null && isUngoverned(rep.grants_id)) io.out(NO_GRANTS);
  for (const s of rep.segments) io.out(`  ${String(s.n).padStart(3)} ${s.kind.padEnd(9)} ${s.detail}`);
  const e = v.energy;
  if (e !== null) {
    const idle = e.idle_by_provenance;
    io.out(
      `energy: active ${e.active_uj} µJ (receipts) + idle ${e.idle_uj} µJ = ${e.total_uj} µJ${e.complete ? "" : " (lower bound)"}`,
    );
    io.out(
      `  idle by provenance: measured ${idle.measured}, attributed ${idle.attributed}, estimated ${idle.estimated}`,
    );
    for (const [a, att] of v.attestations)
      io.out(
        `  receipt of ${a.slice(0, 23)}…: ${att.predicate.energy.total_uj} µJ ${att.predicate.energy.provenance}`,
      );
  }
  io.out(
    `objects: ${v.objects.signed.length} signed, ${v.objects.plain.length} plain; signers ${v.signers.join(", ") || "none"}`,
  );
  for (const a of v.objects.signed) io.out(`  signed ${a}`);
  for (const a of v.objects.plain) io.out(`  object ${a}`);
  for (const m of v.missing) io.out(`  not in store: ${m}`);
  if (!v.valid) io.out(`INVALID ${v.error?.code ?? ""}: ${v.error?.message ?? ""}`);
}

const show: Command = {
  name: "show",
  summary: "show one run: segments, energy by provenance including idle, objects",
  help: `usage: sbx show RUN [--store DIR] [--json]
  Shows run RUN (its id or a unique prefix of it), verified from genesis with the objects the store
  holds: every segment, energy as receipts (active) + idle with idle energy by provenance (measured,
  attributed, estimated), each attestation's receipt, and every object the run references.
${STORE_HELP}
  A run whose grants_id names no grant (the address of {} or of the empty grant set) is said to have
  no grants: it was not governed by a grant.
  A run whose supervisor on this host is gone is said so (§13.7.4).
  --json            print {id, report, governed, supervisor, objects, attestations}
exit: 0 shown (valid), 1 the run does not verify, 2 usage error, unknown run or unusable store`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      store: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("exactly one RUN is required");
    const url = runStoreUrl(values.store);
    let id: Digest;
    let v: RunVerification;
    let sup: SupervisorState | null = null;
    if (url !== null)
      [id, v] = await withPg(url, async (pg) => {
        const found = await resolvePgRun(pg, positionals[0]);
        return [found, (await verifyPgRun(pg, found)).run] as const;
      });
    else {
      const { store, done } = await readableRunStore(values.store, positionals[0] ?? null);
      await done();
      id = resolveRun(store, positionals[0]);
      v = verifyStored(store, id);
      sup = supervisorState(store.root, id, v.record?.head ?? null);
    }
    if (values.json === true)
      printJson(io, {
        id,
        report: reportOf(v),
        governed: v.record === null ? null : !isUngoverned(v.record.grantsId),
        supervisor: sup,
        objects: v.objects,
        attestations: [...v.attestations].map(([a, x]) => ({
          address: a,
          host: x.predicate.host,
          energy: x.predicate.energy,
        })),
      });
    else printShow(io, id, v, sup);
    return v.valid ? EXIT.ok : EXIT.invalid;
  },
};

export const commands: Command[] = [runs, show];
