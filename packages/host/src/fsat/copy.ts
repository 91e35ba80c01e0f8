// A tree copied from one open directory into another, entry by entry relative to the descriptors
// (at.ts), so a tree of any depth copies: a path past PATH_MAX, which a unit can make in its
// workspace and which cp and tar refuse, is never handed to the kernel. Used where the source is at
// rest (a sandbox's workspace image once its unit is gone, §5.3), so nothing swaps entries during
// the copy; every entry is still opened without following a link.
//
// What is kept of each entry: its kind (directory, regular file, symbolic link, FIFO, character or
// block device), bytes, owner and group, mode (set-id bits included), and access and modification
// times. Files with one inode under several names keep sharing it. A socket is not copied (it is
// only a name while no process listens on it). Extended attributes are not copied.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  fchmodSync,
  fchownSync,
  fstatSync,
  futimesSync,
  lchownSync,
  lutimesSync,
  mkdirSync,
  readSync,
  renameSync,
  symlinkSync,
  type Stats,
} from "node:fs";
import { HostError } from "../errors.ts";
import {
  atPath,
  closeQuiet,
  listAt,
  lstatAt,
  openDirAt,
  openFileAt,
  readlinkAt,
  removeTreeAt,
} from "./at.ts";

/** The most files with several names whose first copy stays open to link the others to (then copied). */
const MAX_HELD_LINKS = 256;

/** Source inode → an open descriptor of its first copy, for the names after the first. */
type Links = Map<number, number>;

function failed(file: string, detail: string): never {
  throw new HostError("TreeCopyFailed", `${file}: ${detail}`);
}

/**
 * made runs a helper program that makes one entry at /proc/self/fd/3/TMP (its fd 3 is `dst`, its fd
 * 4 `extra` when given: the program's own /proc/self is not the host's), then renames it to `name`:
 * a name need not be text to be a name, a program's arguments must be.
 */
function made(dst: number, name: Buffer, file: string, args: (at: string) => string[], extra?: number): void {
  const tmp = `.sbx-copy-${randomBytes(6).toString("hex")}`;
  const fds = extra === undefined ? [dst] : [dst, extra];
  const r = spawnSync(file, args(`/proc/self/fd/3/${tmp}`), { stdio: ["ignore", "ignore", "pipe", ...fds] });
  if (r.status !== 0) failed(file, (r.stderr.toString() || String(r.error ?? r.signal)).trim());
  renameSync(atPath(dst, tmp), atPath(dst, name));
}

// Owner, then mode (a chown clears set-id bits), then times, on the open copy.
function attributes(fd: number, st: Stats): void {
  fchownSync(fd, st.uid, st.gid);
  fchmodSync(fd, st.mode & 0o7777);
  futimesSync(fd, st.atime, st.mtime);
}

function devNumbers(rdev: number): [string, string] {
  const d = BigInt(rdev);
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn);
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn);
  return [major.toString(), minor.toString()];
}

function copyEntry(links: Links, src: number, dst: number, name: Buffer): void {
  const st = lstatAt(src, name);
  if (st === null) return;
  const at = atPath(dst, name);
  if (st.isDirectory()) {
    mergeDirectory(links, src, dst, name, true);
    return;
  }
  if (st.isFile()) {
    const first = st.nlink > 1 ? links.get(st.ino) : undefined;
    if (first !== undefined) {
      made(dst, name, "/usr/bin/ln", (p) => ["-L", "--", "/proc/self/fd/4", p], first);
      return;
    }
    const from = openFileAt(src, name);
    if (from === null) return;
    try {
      copyFileSync(atPath(src, name), at, constants.COPYFILE_EXCL);
    } finally {
      closeSync(from.fd);
    }
    const to = openFileAt(dst, name);
    if (to === null) failed("copy", `${name.toString()} changed while it was copied`);
    attributes(to.fd, st);
    if (st.nlink > 1 && links.size < MAX_HELD_LINKS) links.set(st.ino, to.fd);
    else closeSync(to.fd);
    return;
  }
  if (st.isSymbolicLink()) {
    const target = readlinkAt(src, name);
    if (target === null) return;
    symlinkSync(target, at);
  } else if (st.isFIFO()) made(dst, name, "/usr/bin/mkfifo", (p) => ["--", p]);
  else if (st.isCharacterDevice() || st.isBlockDevice())
    made(dst, name, "/usr/bin/mknod", (p) => [
      "--",
      p,
      st.isCharacterDevice() ? "c" : "b",
      ...devNumbers(st.rdev),
    ]);
  else return; // a socket
  // Neither a link nor a FIFO is opened to set its attributes (a FIFO's open would block).
  lchownSync(at, st.uid, st.gid);
  if (!st.isSymbolicLink()) chmodSync(at, st.mode & 0o7777);
  lutimesSync(at, st.atime, st.mtime);
}

/**
 * replaceTreeAt makes the directory open as `dst` hold what the directory open as `src` holds, and
 * nothing else: what `src` lacks is removed, a file `src` holds unchanged is left alone, the rest is
 * copied in (see the file comment), and `dst` itself takes `src`'s owner, mode and times. Refuses
 * `TreeCopyFailed` when a helper program fails.
 */
export function replaceTreeAt(src: number, dst: number): void {
  const links: Links = new Map();
  try {
    mergeChildren(links, src, dst);
  } finally {
    for (const fd of links.values()) closeQuiet(fd);
  }
  attributes(dst, fstatSync(src));
}

/**
 * mergeChildren makes `dst`'s entries `src`'s: a name `src` lacks is removed, a directory in both
 * is merged, a regular file `src` holds unchanged is left as it is, anything else is replaced by a
 * copy. Leaving an unchanged file alone keeps its inode, its times to the nanosecond and its ctime,
 * so a run that did not touch it neither journals it as written (§8.2: run/files.ts compares
 * stamps) nor moves its times (the workspace's image keeps whole seconds only).
 */
function mergeChildren(links: Links, src: number, dst: number): void {
  const names = listAt(src);
  const keep = new Set(names.map((n) => n.toString("latin1")));
  for (const name of listAt(dst)) if (!keep.has(name.toString("latin1"))) removeTreeAt(dst, name);
  for (const name of names) {
    const s = lstatAt(src, name);
    const d = lstatAt(dst, name);
    if (s !== null && d !== null) {
      if (s.isDirectory() && d.isDirectory()) {
        mergeDirectory(links, src, dst, name);
        continue;
      }
      if (unchanged(src, dst, name, s, d)) continue;
      removeTreeAt(dst, name);
    }
    copyEntry(links, src, dst, name);
  }
}

/** mergeDirectory merges the directory `name` of `src` into `dst`'s, which `make` makes first (a copy). */
function mergeDirectory(links: Links, src: number, dst: number, name: Buffer, make = false): void {
  const from = openDirAt(src, name);
  if (from === null) return;
  try {
    if (make) mkdirSync(atPath(dst, name), { mode: 0o700 });
    const to = openDirAt(dst, name);
    if (to === null) failed(make ? "mkdir" : "merge", `${name.toString()} changed while it was made`);
    try {
      mergeChildren(links, from.fd, to.fd);
      attributes(to.fd, from.st);
    } finally {
      closeSync(to.fd);
    }
  } finally {
    closeSync(from.fd);
  }
}

/**
 * unchanged: `name` is one regular file in both (one name each: a file with several is always
 * copied, so its names keep sharing one inode), of the same size, owner and mode, with the
 * modification time the image was made with (the directory's, in whole seconds), and the same bytes.
 */
function unchanged(src: number, dst: number, name: Buffer, s: Stats, d: Stats): boolean {
  if (!s.isFile() || !d.isFile() || s.nlink > 1 || d.nlink > 1) return false;
  if (s.size !== d.size || s.uid !== d.uid || s.gid !== d.gid || (s.mode & 0o7777) !== (d.mode & 0o7777))
    return false;
  // The image holds what it was made from at whole seconds; a file written in it since has the
  // kernel's finer time. Left alone only with the time the image was made with.
  if (s.mtimeMs % 1000 !== 0 || Math.floor(d.mtimeMs / 1000) !== s.mtimeMs / 1000) return false;
  const a = openFileAt(src, name);
  if (a === null) return false;
  try {
    const b = openFileAt(dst, name);
    if (b === null) return false;
    try {
      return sameBytes(a.fd, b.fd, s.size);
    } finally {
      closeSync(b.fd);
    }
  } finally {
    closeSync(a.fd);
  }
}

function sameBytes(a: number, b: number, size: number): boolean {
  const x = Buffer.allocUnsafe(1 << 16);
  const y = Buffer.allocUnsafe(1 << 16);
  for (let at = 0; at < size;) {
    const n = readSync(a, x, 0, x.length, at);
    if (n <= 0 || readSync(b, y, 0, n, at) !== n || x.compare(y, 0, n, 0, n) !== 0) return false;
    at += n;
  }
  return true;
}
