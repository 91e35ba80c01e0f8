// §15 The pool directory on disk: the signed descriptor, the ledger as one signed entry per line
// (appended with fsync, so a committed entry survives a crash), a lock, and one folder per item.
//   <dir>/pool.json                 the signed descriptor (§15.1)
//   <dir>/ledger.jsonl              one DSSE envelope per line, in chain order (§15.2)
//   <dir>/lock                      held while an operation appends
//   <dir>/items/<item>/workspace/   the item's pre-created workspace
//   <dir>/items/<item>/proc.json    the item's idle process, when the host keeps one
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { Envelope } from "@sbx/wire";
import { HostError } from "../errors.ts";

/** Paths of a pool directory. */
export function poolPaths(dir: string) {
  return {
    descriptor: join(dir, "pool.json"),
    ledger: join(dir, "ledger.jsonl"),
    lock: join(dir, "lock"),
    items: join(dir, "items"),
    item: (id: string) => join(dir, "items", id),
    workspace: (id: string) => join(dir, "items", id, "workspace"),
    proc: (id: string) => join(dir, "items", id, "proc.json"),
  };
}

/** fsyncPath flushes a file or directory by path. */
export function fsyncPath(p: string): void {
  const fd = openSync(p, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** writeFileDurably: the store's crash-safe whole-file write (temp, fsync, rename, fsync of the folder). */
export { writeFileDurably } from "../store/durable.ts";

/** appendLines appends envelopes as lines to the ledger and fsyncs before returning. */
export function appendLines(ledger: string, envs: readonly Envelope[]): void {
  if (envs.length === 0) return;
  const fd = openSync(ledger, "a", 0o644);
  try {
    writeSync(fd, envs.map((e) => JSON.stringify(e) + "\n").join(""));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** readLedgerLines reads the ledger's envelopes; a last line without its newline is `PoolTorn`. */
export function readLedgerLines(ledger: string): unknown[] {
  if (!existsSync(ledger)) return [];
  const text = readFileSync(ledger, "utf8");
  if (text.length > 0 && !text.endsWith("\n"))
    throw new HostError("PoolTorn", `${ledger} ends in a torn entry`);
  return text
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l, i) => {
      try {
        return JSON.parse(l) as unknown;
      } catch (e) {
        throw new HostError("PoolTorn", `${ledger} line ${i + 1} is not JSON`, { cause: e });
      }
    });
}

/** withLock runs `fn` holding the pool's lock file; another holder is `PoolBusy`. */
export function withLock<T>(lock: string, fn: () => T): T {
  let fd: number;
  try {
    fd = openSync(lock, "wx", 0o644);
  } catch (e) {
    throw new HostError("PoolBusy", `${lock} is held by another operation`, { cause: e });
  }
  try {
    writeSync(fd, String(process.pid));
    return fn();
  } finally {
    closeSync(fd);
    unlinkSync(lock);
  }
}

/** ensureDir creates a directory (and parents). */
export function ensureDir(p: string): void {
  mkdirSync(p, { recursive: true });
}
