// `sbx wait RUN` and `sbx ps`, as `docker wait` and `docker ps` are: watch a durable run until it
// stops going, and list the runs whose supervisor lives on this host (sandbox-attest §13.10a item
// 9). Both only read: the record through the run store, and the run's host-local files in the
// store's live/ folder (host/src/durable/watch.ts); neither takes a run's lock nor asks its
// supervisor, so watching never delays a suspend, resume or close.
import { parseCanonical, type Digest } from "@sbx/wire";
import { parseUnit } from "@sbx/sandbox-attest/unit";
import { verifyRun, type RunVerification } from "@sbx/sandbox-attest/store";
import { storeObjects } from "@sbx/host/store";
import { SharedRunStore, verifyPgRun } from "@sbx/host/pg";
import {
  hostLocalDir,
  openAnyRunStore,
  readableRunStore,
  resolveStoreRun,
  runStoreUrl,
  withPg,
} from "@sbx/host/stores";
import { liveRuns, waitRun, waitText, type WaitEnd } from "@sbx/host/durable";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";

const STORE_HELP = `  --store DIR|URL   the run store (default $SBX_STORE, else $XDG_DATA_HOME/sbx or ~/.local/share/sbx);
                    postgres://… is the PostgreSQL store shared by many hosts (local state: $SBX_LOCAL_DIR)`;

/** timeoutOf reads --timeout MS: a whole number of milliseconds, 0 included (look once). */
function timeoutOf(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,10}$/.test(v)) throw new UsageError("--timeout must be a whole number of milliseconds");
  return Number(v);
}

/** exitCodeOf: the command's own exit status where it exited by itself (closed after, too), else 1. */
function exitCodeOf(e: WaitEnd): number {
  const o = e.state === "ended" ? e.outcome : e.state === "closed" ? e.last : null;
  return o?.status === "exited" ? o.exit_code : EXIT.invalid;
}

/** The JSON of a wait's end: every field present, null where it does not apply. */
function waitJson(id: Digest, e: WaitEnd) {
  const o = e.state === "ended" ? e.outcome : e.state === "closed" ? e.last : null;
  return {
    id,
    state: e.state === "ended" ? e.outcome.status : e.state,
    text: waitText(e),
    exit_code: o?.status === "exited" ? o.exit_code : null,
    signal: o?.status === "signaled" ? o.signal : null,
    close_outcome: e.state === "closed" ? e.outcome : null,
    moved_to: e.state === "moved" ? e.to : null,
    supervisor_pid: e.state === "supervisor_gone" ? e.pid : null,
    last_outcome: o,
  };
}

const wait: Command = {
  name: "wait",
  summary: "block until a durable run's command ends, or it is parked, closed, or its supervisor is gone",
  help: `usage: sbx wait RUN [--store DIR] [--timeout MS] [--exit-code] [--json]
  Waits for run RUN (its id or a unique prefix of it) to stop going, and prints one line saying how:
    exited N, signaled SIG     its command ended and its last interval is recorded: the outcome that
                               interval's attestation states (the record verified from genesis)
    parked                     it was suspended (sbx suspend, a Ctrl-C at its terminal)
    closed OUTCOME             it was closed (completed, failed or abandoned)
    moved to "WHERE"           it was handed to another store (sbx export --move)
    supervisor gone (pid N)    the process that supervised it on this host died (§13.10a item 8;
                               the next sbx suspend, close or resume recovers its interval)
    not running: …             (a file store) it is active with nothing open and nothing holding it
  A run that stopped before the wait ends it at once. The wait only reads: it polls the record and
  the run's files in the store's live/ folder about every 100 ms, takes no lock and never asks the
  supervisor. On a PostgreSQL store an active run with nothing live on this host is waited for (another
  host may be running it), and its end is read from the record.
  --timeout MS      give up after MS milliseconds (0: look once): refused with WaitTimeout (exit 1)
  --exit-code       exit with the command's own exit status (0–255) when it exited by itself (also for
                    a run closed after that); 1 for every other end (signaled, parked, gone…)
${STORE_HELP}
  --json            print {id, state, text, exit_code, signal, close_outcome, moved_to, supervisor_pid,
                    last_outcome}; state: exited, signaled, spawn_failed, parked, closed, moved,
                    supervisor_gone or unsupervised
exit: 0 the run stopped going (with --exit-code: as above), 1 WaitTimeout or a refusal,
      2 usage error, unknown run or unusable store`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      store: { type: "string" },
      timeout: { type: "string" },
      "exit-code": { type: "boolean" },
      json: { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("exactly one RUN is required");
    const timeoutMs = timeoutOf(values.timeout);
    const store = await openAnyRunStore(values.store, false);
    try {
      const id = await resolveStoreRun(store, positionals[0]);
      const end = await waitRun(store, id, {
        local: !(store instanceof SharedRunStore),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      });
      if (values.json === true) printJson(io, waitJson(id, end));
      else io.out(waitText(end));
      return values["exit-code"] === true ? exitCodeOf(end) : EXIT.ok;
    } finally {
      if (store instanceof SharedRunStore) await store.close();
    }
  },
};

/** One row of `sbx ps`. */
interface PsRow {
  readonly id: Digest;
  readonly pid: number;
  readonly phase: string | null;
  readonly since_ms: number;
  readonly since: string;
  readonly command: readonly string[] | null;
  readonly entry: string | null;
  readonly energy_uj: string | null;
  readonly energy_complete: boolean;
  readonly valid: boolean;
}

function rowOf(
  live: { id: Digest; pid: number; since_ms: number },
  v: RunVerification,
  unit: Uint8Array | null,
): PsRow {
  let argv: readonly string[] | null = null;
  let entry: string | null = null;
  if (unit !== null)
    try {
      const u = parseUnit(parseCanonical(unit));
      argv = u.argv ?? null;
      entry = u.entry ?? null;
    } catch {
      // the record's verification says what is wrong with it (valid false)
    }
  return {
    id: live.id,
    pid: live.pid,
    phase: v.record?.phase ?? null,
    since_ms: live.since_ms,
    since: new Date(live.since_ms).toISOString(),
    command: argv,
    entry,
    energy_uj: v.energy?.total_uj ?? null,
    energy_complete: v.energy?.complete ?? false,
    valid: v.valid,
  };
}

const ps: Command = {
  name: "ps",
  summary: "list the durable runs of the store whose supervisor is live on this host",
  help: `usage: sbx ps [--store DIR] [--json]
  Lists the runs of the run store with a live supervisor on this host (its open-interval file in the
  store's live/ folder names a process that is alive with the start time it had, §13.10a item 8):
  the run id as sbx runs prints it, the supervisor's pid, the phase (active, or parked while its
  processes stay frozen here), since when (the start of the interval that file names), the energy
  recorded so far (receipts + idle, µJ, as sbx runs totals it; "≥" when an attestation is not in the
  store) and the unit's command. With none, only the header line. It only reads: no lock is taken
  and no supervisor is asked. A run whose supervisor is gone is not listed (sbx runs says it).
${STORE_HELP}
  --json            print a JSON array (empty: []) of {id, pid, phase, since_ms, since, command,
                    entry, energy_uj, energy_complete, valid}
exit: 0 listed, 1 a listed run does not verify, 2 usage error or unusable store`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      store: { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length !== 0) throw new UsageError("sbx ps takes no arguments");
    const url = runStoreUrl(values.store);
    let rows: PsRow[];
    if (url !== null)
      rows = await withPg(url, async (pg) => {
        const out: PsRow[] = [];
        for (const l of liveRuns(hostLocalDir(), await pg.listRecords())) {
          const v = (await verifyPgRun(pg, l.id)).run;
          out.push(rowOf(l, v, v.record === null ? null : await pg.getObject(v.record.unitId)));
        }
        return out;
      });
    else {
      const { store, done } = await readableRunStore(values.store, null);
      await done();
      rows = liveRuns(store.root, store.recordIds()).map((l) => {
        const v = verifyRun(store.readRunSync(l.id).bytes, storeObjects(store), { expectId: l.id });
        return rowOf(l, v, v.record === null ? null : store.getObjectSync(v.record.unitId));
      });
    }
    if (values.json === true) printJson(io, rows);
    else {
      io.out(
        `${"run".padEnd(24)} ${"pid".padStart(7)} ${"phase".padEnd(7)} ${"since".padEnd(24)} ${"energy (µJ)".padStart(14)}  command`,
      );
      for (const r of rows)
        io.out(
          `${r.id.slice(0, 24)} ${String(r.pid).padStart(7)} ${(r.phase ?? "INVALID").padEnd(7)} ${r.since.padEnd(24)} ${(r.energy_uj === null ? "?" : `${r.energy_complete ? "" : "≥ "}${r.energy_uj}`).padStart(14)}  ${r.command !== null ? r.command.join(" ") : r.entry !== null ? `(entry ${r.entry})` : "?"}`,
        );
    }
    return rows.every((r) => r.valid) ? EXIT.ok : EXIT.invalid;
  },
};

export const commands: Command[] = [wait, ps];
