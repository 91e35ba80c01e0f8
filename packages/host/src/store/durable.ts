// The durable file primitives of the file-backed store (§13.7): temp file + fsync + atomic rename or
// link + fsync of the directory. Synchronous, so a step sequence is exactly what the crash tests count.
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, unlinkSync } from "node:fs";
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

/** writeTemp writes `bytes` to a new temp file (mode `mode`, default read-only) and fsyncs it; returns its path. */
export function writeTemp(tmpDir: string, bytes: Uint8Array, mode = 0o444): string {
  const p = tempPath(tmpDir);
  const fd = openSync(p, "wx", mode);
  try {
    writeFully(fd, bytes, 0, "temp");
    faultPoint("fsync-temp");
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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
 * atomic and fails with EEXIST); returns false when another writer got there first.
 */
export function publishExclusive(tmp: string, dest: string): boolean {
  try {
    faultPoint("link");
    linkSync(tmp, dest);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    unlinkSync(tmp);
  }
}

/**
 * writeFileDurably replaces `path` with `text` crash-safely: a temp file beside it, fsync, atomic
 * rename, fsync of the folder. A reader sees the old file or the new one, never half of either.
 */
export function writeFileDurably(path: string, text: string, mode = 0o644): void {
  publishRename(writeTemp(dirname(path), new TextEncoder().encode(text), mode), path, true);
}
