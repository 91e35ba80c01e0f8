// Moving the ledgers between stores (`sbx store copy`): every chained log (spend, revocation, mint,
// checkpoint, pool, …) of one store into another, file store ⇄ PostgreSQL, verified on arrival.
//
// Where the ledgers are: in PostgreSQL, the logs of the store's own database (PgStore.logs); in a
// store directory, the log folders under `<store>/logs/` (FileLogStore: the log named
// "spend/<grant>" is the folder `<store>/logs/spend/<grant>`), and the ledger folder of each pool
// `<store>/pools/NAME/ledger/`, which is the log `pool/<pool_id>` (sandbox-attest §15.7.1; pool_id
// from that pool's pool.json). Into a store directory, `pool/<pool_id>` goes to the ledger folder of
// the pool there whose pool.json has that id, else to `<store>/logs/pool/<pool_id>` as any log.
//
// A log is read verified from its source (every link, `LogBroken`), the destination's copy must be a
// prefix of it entry for entry (`LogDiverged` otherwise), the missing entries are appended on the
// destination's head (PostgreSQL: in one transaction; a folder: one compare-and-append per entry),
// and the destination is read back, verified, and must hold exactly the source's entries and head
// (`LogDiverged`). Run again after an interruption: what is there is kept and the copy continues.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";
import { appendLogAt, readLog, type LogState } from "../log/appendlog.ts";
import { FileLogStore, type LogStore } from "../log/logstore.ts";
import { FileStore } from "../store/filestore.ts";
import type { AnyStore } from "./copy.ts";
import { descriptorBytes, poolLogDir } from "../pool/poollog.ts";
import { poolLogName } from "../pool/ledger.ts";
import { ledgerAtPath } from "../pool/ledgerat.ts";

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

/**
 * poolLedgers maps the log name (`pool/<pool_id>`) of each pool folder `<store>/pools/NAME` holding a
 * pool.json to its ledger folder (existing or not). Two folders of one pool: `LogDiverged`.
 */
function poolLedgers(s: FileStore): Map<string, string> {
  const root = join(s.root, "pools");
  const out = new Map<string, string>();
  if (!existsSync(root)) return out;
  for (const n of readdirSync(root).sort()) {
    const dir = join(root, n);
    // A pool whose ledger is in a LogStore (its marker) takes none here: its log stays under logs/.
    if (!SEGMENT.test(n) || !existsSync(join(dir, "pool.json")) || existsSync(ledgerAtPath(dir))) continue;
    const name = poolLogName(descriptorBytes(dir));
    if (out.has(name))
      throw diverged(name, `two pool folders hold it (${out.get(name)!}, ${poolLogDir(dir)})`);
    out.set(name, poolLogDir(dir));
  }
  return out;
}

/** folderOf is the folder of log `name` in a store directory (a pool's ledger folder, else under logs/). */
function folderOf(s: FileStore, name: string): string {
  return poolLedgers(s).get(name) ?? join(logsRoot(s), ...name.split("/"));
}

/** readAt reads log `name` of either kind of store, every link checked (`LogBroken`). */
function readAt(s: AnyStore, name: string): Promise<LogState> {
  return s instanceof FileStore
    ? Promise.resolve().then(() => readLog(folderOf(s, name)))
    : s.logs.readLog(name);
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
  for (const [name, dir] of poolLedgers(s))
    if (existsSync(dir) && isLogFolder(dir) && !out.includes(name)) out.push(name);
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
  const src = await readAt(from, name);
  const dst = await readAt(to, name);
  checkPrefix(name, src, dst);
  const rest = src.entries.slice(dst.entries.length);
  if (to instanceof FileStore) {
    const dir = folderOf(to, name);
    let mark = { seq: dst.entries.length, head: dst.head };
    for (const e of rest) mark = appendLogAt(dir, mark, e.payload);
  } else
    await to.logs.appendMany(
      name,
      dst.head,
      rest.map((e) => e.payload),
    );
  const back = await readAt(to, name);
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
