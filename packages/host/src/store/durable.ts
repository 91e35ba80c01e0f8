// The durable file primitives of the file-backed store (§13.7): temp file + fsync + atomic rename or
// link + fsync of the directory. Synchronous, so a step sequence is exactly what the crash tests count.
import {
  closeSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  unlinkSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { faultPoint, writeFully } from "./fault.ts";

/** fsyncDir flushes a directory's entries (new names, renames, unlinks). */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    faultPoint(`fsync-dir ${dir}`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** tempPath returns a fresh name in `tmpDir`, prefixed by this pid so stale ones can be swept. */
export function tempPath(tmpDir: string): string {
  return join(tmpDir, `${process.pid}-${randomBytes(8).toString("hex")}`);
}

/** TEMP_NAME matches the names tempPath makes: `<pid>-<16 hex>`. */
export const TEMP_NAME = /^([1-9][0-9]{0,9})-[0-9a-f]{16}$/;

/** removeQuiet unlinks a file on a cleanup path, ignoring every error (a sweep gets it later). */
export function removeQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* best effort: the temp name carries our pid, so the next open after we exit sweeps it */
  }
}

/**
 * writeTemp writes `bytes` to a new temp file (mode `mode`, default read-only) and fsyncs it (unless
 * `sync` is false: a claim, whose durability is the record's own fsync); returns its path. On any failure (a full disk included) the temp file is removed before the error is thrown.
 */
export function writeTemp(tmpDir: string, bytes: Uint8Array, mode = 0o444, sync = true): string {
  const p = tempPath(tmpDir);
  const fd = openSync(p, "wx", mode);
  try {
    writeFully(fd, bytes, 0, "temp");
    if (sync) {
      faultPoint("fsync-temp");
      fsyncSync(fd);
    }
  } catch (e) {
    closeSync(fd);
    removeQuiet(p);
    throw e;
  }
  closeSync(fd);
  return p;
}

/** publishRename moves a synced temp file to `dest` atomically (replacing any equal-content file). */
export function publishRename(tmp: string, dest: string, syncDir: boolean): void {
  mkdirSync(dirname(dest), { recursive: true });
  faultPoint("rename");
  renameSync(tmp, dest);
  if (syncDir) fsyncDir(dirname(dest));
}

/**
 * publishExclusive links a synced temp file to `dest` only if `dest` does not exist (link(2) is
 * atomic and fails with EEXIST). Returns true only when `dest` is now this writer's own file: the
 * same inode as its temp file, which no other writer can have, so two writers with byte-identical
 * content are never both told they won. Returns false when another writer got there first; throws
 * when the link failed otherwise and `dest` is not ours. The temp name is removed in every case.
 */
export function publishExclusive(tmp: string, dest: string): boolean {
  let ino: bigint | null = null;
  try {
    ino = identityOrNull(tmp);
    faultPoint("link");
    linkSync(tmp, dest);
    return true;
  } catch (e) {
    if (ino !== null && identityOrNull(dest) === ino) return true; // linked, then the call failed
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    removeQuiet(tmp);
  }
}

function identityOrNull(path: string): bigint | null {
  const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  return st === undefined ? null : (st.dev << 64n) | st.ino;
}

/**
 * writeFileDurably replaces `path` with `text` crash-safely: a temp file beside it, fsync, atomic
 * rename, fsync of the folder. A reader sees the old file or the new one, never half of either.
 */
export function writeFileDurably(path: string, text: string, mode = 0o644): void {
  const tmp = writeTemp(dirname(path), new TextEncoder().encode(text), mode);
  try {
    publishRename(tmp, path, true);
  } catch (e) {
    removeQuiet(tmp); // already gone when only the folder's fsync failed
    throw e;
  }
}
