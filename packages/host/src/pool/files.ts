// §15 The pool directory on disk: the signed descriptor, the ledger as one signed entry per line
// (appended with fsync, so a committed entry survives a crash), a lock, and one folder per item.
//   <dir>/pool.json                 the signed descriptor (§15.1)
//   <dir>/ledger.jsonl              one DSSE envelope per line, in chain order (§15.2)
//   <dir>/lock                      held while an operation appends
//   <dir>/items/<item>/workspace/   the item's pre-created workspace
//   <dir>/items/<item>/proc.json    the item's idle process, when the host keeps one
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Envelope } from "@sbx/wire";
import { HostError } from "../errors.ts";
import { errnoOf } from "../fsat/index.ts";
import { startTicks } from "../durable/lock.ts";

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

/** errnoText names the errno of a failed fs call for a message. */
function errnoText(e: unknown): string {
  return errnoOf(e) ?? String(e);
}

/**
 * appendLines appends envelopes as lines to the ledger and fsyncs before returning. A short write
 * is continued until every byte is written; on any failure (ENOSPC, EIO…) the ledger is cut back
 * to its length before the call, so no torn line stays, and the caller gets `PoolWriteFailed`:
 * nothing of the call was committed.
 */
export function appendLines(ledger: string, envs: readonly Envelope[]): void {
  if (envs.length === 0) return;
  const bytes = Buffer.from(envs.map((e) => JSON.stringify(e) + "\n").join(""), "utf8");
  let fd: number;
  try {
    fd = openSync(ledger, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  } catch (e) {
    throw new HostError("PoolUnusable", `cannot open ${ledger}: ${errnoText(e)}`, { cause: e });
  }
  try {
    const before = fstatSync(fd).size;
    try {
      // Positional writes from the length seen: a retry continues exactly where the last stopped.
      for (let off = 0; off < bytes.length;) {
        const n = writeSync(fd, bytes, off, bytes.length - off, before + off);
        if (n <= 0) throw new Error("the write made no progress");
        off += n;
      }
      fsyncSync(fd);
    } catch (e) {
      try {
        ftruncateSync(fd, before);
        fsyncSync(fd);
      } catch (cut) {
        throw new HostError(
          "PoolWriteFailed",
          `${ledger}: append failed (${errnoText(e)}) and cutting back to ${String(before)} bytes failed (${errnoText(cut)})`,
          { cause: e },
        );
      }
      throw new HostError(
        "PoolWriteFailed",
        `${ledger}: append failed (${errnoText(e)}); nothing was committed`,
        {
          cause: e,
        },
      );
    }
  } finally {
    closeSync(fd);
  }
}

/** The most bytes readLedgerLines reads: 64 MiB (a ledger past it is refused before any parse). */
export const LEDGER_LIMIT = 64 * 1024 * 1024;

/**
 * readLedgerLines reads the ledger's envelopes; a last line without its newline is `PoolTorn`, a
 * ledger over `limit` bytes (LEDGER_LIMIT) is `PoolTooLarge`, refused before it is read.
 */
export function readLedgerLines(ledger: string, limit: number = LEDGER_LIMIT): unknown[] {
  return parseLedgerLines(ledger, readLedgerBytes(ledger, limit));
}

/**
 * readLedgerBytes reads the ledger's bytes (no symlink followed; a missing ledger is empty), refusing
 * one over `limit` bytes with `PoolTooLarge` before it is read and one whose last line has no
 * newline with `PoolTorn`.
 */
export function readLedgerBytes(ledger: string, limit: number = LEDGER_LIMIT): Buffer {
  let fd: number;
  try {
    fd = openSync(ledger, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if (errnoOf(e) === "ENOENT") return Buffer.alloc(0);
    throw new HostError("PoolUnusable", `cannot open ${ledger}: ${errnoText(e)}`, { cause: e });
  }
  let bytes: Buffer;
  try {
    const size = fstatSync(fd).size;
    if (size > limit)
      throw new HostError(
        "PoolTooLarge",
        `${ledger} is ${String(size)} bytes, over the ${String(limit)}-byte ledger limit`,
      );
    const buf = Buffer.alloc(size);
    let got = 0;
    for (let n; got < size && (n = readSync(fd, buf, got, size - got, got)) > 0;) got += n;
    bytes = buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
  if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a)
    throw new HostError("PoolTorn", `${ledger} ends in a torn entry`);
  return bytes;
}

/**
 * parseLedgerLines parses whole ledger lines (bytes that end in a newline, or none) into envelopes;
 * a line that is not JSON is `PoolTorn`, named by its line number counted from `firstLine`.
 */
export function parseLedgerLines(ledger: string, bytes: Uint8Array, firstLine = 1): unknown[] {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString("utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l, i) => {
      try {
        return JSON.parse(l) as unknown;
      } catch (e) {
        throw new HostError("PoolTorn", `${ledger} line ${String(i + firstLine)} is not JSON`, {
          cause: e,
        });
      }
    });
}

/** How old a lock with no readable holder must be before it counts as stale (a crash mid-create). */
const UNREADABLE_LOCK_MS = 10_000;

/**
 * holderAlive reads the lock's holder ("<pid> <start>\n") and reports whether it still runs: the
 * pid answers `kill(pid, 0)` (EPERM counts as alive), is no zombie, and, when a start time was
 * recorded, is the same process (not a later one given the same pid). A lock without a readable
 * pid counts as held until it is UNREADABLE_LOCK_MS old. Returns the lock's inode with it, or null
 * when the lock is gone.
 */
function lockHolder(lock: string): { ino: number; alive: boolean; pid: number | null } | null {
  let fd: number;
  try {
    fd = openSync(lock, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if (errnoOf(e) === "ENOENT") return null;
    throw new HostError("PoolUnusable", `cannot read ${lock}: ${errnoText(e)}`, { cause: e });
  }
  try {
    const st = fstatSync(fd);
    const buf = Buffer.alloc(64);
    const text = buf.subarray(0, readSync(fd, buf, 0, 64, 0)).toString("latin1");
    const m = /^(\d{1,10})(?: (\d{1,20}))?\s*$/.exec(text);
    const pid = m ? Number(m[1]) : null;
    if (pid === null || pid <= 0)
      return { ino: st.ino, pid: null, alive: Date.now() - st.mtimeMs < UNREADABLE_LOCK_MS };
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch (e) {
      alive = errnoOf(e) === "EPERM";
    }
    const start = startTicks(pid);
    if (start === null) alive = false;
    else if (m?.[2] !== undefined && m[2] !== start) alive = false;
    return { ino: st.ino, pid, alive };
  } finally {
    closeSync(fd);
  }
}

function lockError(lock: string, e: unknown): HostError {
  if (errnoOf(e) === "ENOENT")
    return new HostError("PoolMissing", `${lock}: the pool directory is missing`, { cause: e });
  return new HostError("PoolUnusable", `cannot take ${lock}: ${errnoText(e)}`, { cause: e });
}

// This process's holder line: its pid and start time never change, so /proc is read once.
let ownHolder: string | null = null;
function holderLine(): string {
  ownHolder ??= `${String(process.pid)} ${startTicks(process.pid) ?? ""}`.trim() + "\n";
  return ownHolder;
}

/**
 * takeLock makes the lock file appear with its holder already written (a temp file hard-linked to
 * the lock's name: link(2) fails when the name exists, so there is never a lock without its pid).
 * A lock whose holder is dead is moved aside and checked to be the very file judged stale (same
 * inode) before it is dropped; another holder that is alive is `PoolBusy`. Returns the lock's inode.
 */
function takeLock(lock: string): number {
  const me = holderLine();
  const tmp = `${lock}.${String(process.pid)}.${randomBytes(6).toString("hex")}.tmp`;
  let fd: number;
  try {
    fd = openSync(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o644,
    );
  } catch (e) {
    throw lockError(lock, e);
  }
  try {
    try {
      writeSync(fd, me, 0);
    } catch (e) {
      throw lockError(lock, e);
    } finally {
      closeSync(fd);
    }
    for (let tries = 0; tries < 4; tries++) {
      try {
        linkSync(tmp, lock);
        return lstatSync(tmp).ino;
      } catch (e) {
        if (errnoOf(e) !== "EEXIST") throw lockError(lock, e);
      }
      const holder = lockHolder(lock);
      if (holder === null) continue;
      if (holder.alive)
        throw new HostError(
          "PoolBusy",
          `${lock} is held by another operation${holder.pid === null ? "" : ` (pid ${String(holder.pid)})`}`,
        );
      const aside = `${lock}.stale.${randomBytes(6).toString("hex")}`;
      try {
        renameSync(lock, aside);
      } catch (e) {
        if (errnoOf(e) === "ENOENT") continue;
        throw lockError(lock, e);
      }
      if (lstatSync(aside).ino !== holder.ino) {
        // Another process broke the same stale lock and took it first: hand its lock back.
        try {
          linkSync(aside, lock);
        } finally {
          unlinkSync(aside);
        }
        throw new HostError("PoolBusy", `${lock} was just taken over by another operation`);
      }
      unlinkSync(aside);
    }
    throw new HostError("PoolBusy", `${lock} kept changing hands`);
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
  }
}

/**
 * withLock runs `fn` holding the pool's lock file. A live holder is `PoolBusy`; a lock left by a
 * process that died (a crash) is taken over; a pool directory that is gone is `PoolMissing`; any
 * other failure to take the lock (EROFS, EACCES, ENOSPC…) is `PoolUnusable`.
 */
export function withLock<T>(lock: string, fn: () => T): T {
  const ino = takeLock(lock);
  try {
    return fn();
  } finally {
    // Release only our own lock (never one another operation holds after a takeover).
    if (lstatSync(lock, { throwIfNoEntry: false })?.ino === ino) unlinkSync(lock);
  }
}

/** ensureDir creates a directory (and parents). */
export function ensureDir(p: string): void {
  mkdirSync(p, { recursive: true });
}
