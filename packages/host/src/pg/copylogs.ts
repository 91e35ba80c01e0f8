// Moving the ledgers between stores (`sbx store copy`): every chained log (spend, revocation, mint,
// checkpoint, pool, …) of one store into another, file store ⇄ PostgreSQL, verified on arrival.
//
// Where the ledgers are: in PostgreSQL, the logs of the store's own database (PgStore.logs); in a
// store directory, the log folders under `<store>/logs/` (FileLogStore: the log named
// "spend/<grant>" is the folder `<store>/logs/spend/<grant>`).
//
// A log is read verified from its source (every link, `LogBroken`), the destination's copy must be a
// prefix of it entry for entry (`LogDiverged` otherwise), the missing entries are appended on the
// destination's head (PostgreSQL: in one transaction; a folder: one compare-and-append per entry),
// and the destination is read back, verified, and must hold exactly the source's entries and head
// (`LogDiverged`). Run again after an interruption: what is there is kept and the copy continues.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";
import { appendLogAt, type LogState } from "../log/appendlog.ts";
import { FileLogStore, type LogStore } from "../log/logstore.ts";
import { FileStore } from "../store/filestore.ts";
import type { AnyStore } from "./copy.ts";

/** What a ledger copy moved. */
export interface LogCopyReport {
  logs: number;
  entries: number;
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const ENTRY = /^[0-9]{12}$/;

/** logsRoot is where a store directory keeps its ledgers. */
export function logsRoot(s: FileStore): string {
  return join(s.root, "logs");
}

/** logStoreOf returns the ledgers of either kind of store. */
export function logStoreOf(s: AnyStore): LogStore {
  return s instanceof FileStore ? new FileLogStore(logsRoot(s)) : s.logs;
}

// A folder is a log when it holds an entry file or the tmp/ folder every log writer makes.
function isLogFolder(dir: string): boolean {
  return readdirSync(dir).some((n) => ENTRY.test(n) || n === "tmp");
}

/** listLogs lists the name of every log a store holds, sorted. */
export async function listLogs(s: AnyStore): Promise<string[]> {
  if (!(s instanceof FileStore)) {
    // Every log holding entries too, should its sbx_logs row be gone (a raw edit with foreign keys
    // off): such a ledger is read, copied and verified like any other, never left behind.
    const r = await s.pool.query<{ name: string }>(
      "SELECT name FROM sbx_logs UNION SELECT DISTINCT log FROM sbx_log_entries ORDER BY name",
    );
    return r.rows.map((row) => row.name);
  }
  const out: string[] = [];
  const walk = (dir: string, parts: string[]) => {
    for (const n of readdirSync(dir).sort()) {
      if (!SEGMENT.test(n) || !statSync(join(dir, n)).isDirectory()) continue;
      const sub = join(dir, n);
      const name = [...parts, n];
      if (isLogFolder(sub)) out.push(name.join("/"));
      // a log's own tmp/ is not a log; names have at most four segments
      else if (name.length < 4) walk(sub, name);
    }
  };
  const root = logsRoot(s);
  if (existsSync(root)) walk(root, []);
  return out.sort();
}

function diverged(name: string, what: string): HostError {
  return new HostError("LogDiverged", `log ${name}: ${what}`);
}

/** samePrefix refuses a destination log that is not a prefix of the source's, entry for entry. */
function checkPrefix(name: string, src: LogState, dst: LogState): void {
  if (dst.entries.length > src.entries.length)
    throw diverged(
      name,
      `the destination holds ${String(dst.entries.length)} entries, the source ${String(src.entries.length)}`,
    );
  dst.entries.forEach((e, i) => {
    if (e.head !== src.entries[i]!.head)
      throw diverged(name, `entry ${String(i + 1)} differs in the destination`);
  });
}

/** copyLog copies one log from `from` into `to`; returns the entries appended. */
async function copyLog(from: AnyStore, to: AnyStore, name: string): Promise<number> {
  const src = await logStoreOf(from).readLog(name);
  const toLogs = logStoreOf(to);
  const dst = await toLogs.readLog(name);
  checkPrefix(name, src, dst);
  const rest = src.entries.slice(dst.entries.length);
  if (to instanceof FileStore) {
    const dir = join(logsRoot(to), ...name.split("/"));
    let mark = { seq: dst.entries.length, head: dst.head };
    for (const e of rest) mark = appendLogAt(dir, mark, e.payload);
  } else
    await to.logs.appendMany(
      name,
      dst.head,
      rest.map((e) => e.payload),
    );
  const back = await toLogs.readLog(name);
  if (back.head !== src.head || back.entries.length !== src.entries.length)
    throw diverged(name, "the destination reads back different from its source");
  return rest.length;
}

/** copyLogs copies every log of `from` into `to`, each verified on arrival. */
export async function copyLogs(
  from: AnyStore,
  to: AnyStore,
  progress: (what: string) => void = () => undefined,
): Promise<LogCopyReport> {
  const r: LogCopyReport = { logs: 0, entries: 0 };
  for (const name of await listLogs(from)) {
    r.entries += await copyLog(from, to, name);
    r.logs++;
    progress(`log ${name}`);
  }
  return r;
}
