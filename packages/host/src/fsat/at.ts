// Directory-relative file operations for trees a unit controls (§13.8, §8.2, §12): Node has no
// openat(2), so an entry is reached as /proc/self/fd/<dirfd>/<name>. The kernel resolves the
// /proc link to exactly the directory the descriptor holds, and O_NOFOLLOW applies to <name>, the
// last component: nothing a running unit renames or swaps in can redirect the host. Names are one
// component (no "/", not "." or ".."), so every path handed to the kernel stays short however deep
// the tree is. Every opened descriptor is checked with fstat before its bytes are used.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  type Stats,
} from "node:fs";
import { HostError } from "../errors.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK, O_NOCTTY } = constants;
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
const DIR_FLAGS = READ_FLAGS | O_DIRECTORY;
const CREATE_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY;

/** errnoOf returns the errno code of a failed fs call, or undefined. */
export function errnoOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("E") ? code : undefined;
}

/** assertName refuses a name that is not exactly one path component (RangeError: caller misuse). */
export function assertName(name: string | Buffer): void {
  const s = typeof name === "string" ? name : name.toString("latin1");
  if (s === "" || s === "." || s === ".." || s.includes("/") || s.includes("\0"))
    throw new RangeError(`fsat: ${JSON.stringify(s)} is not one path component`);
}

/** atPath is the kernel path of `name` inside the directory open as `dirFd`. */
export function atPath(dirFd: number, name: string | Buffer): string | Buffer {
  assertName(name);
  if (typeof name === "string") return `/proc/self/fd/${dirFd}/${name}`;
  return Buffer.concat([Buffer.from(`/proc/self/fd/${dirFd}/`), name]);
}

/** openRoot opens the directory `path` the host chose (its own components may be links it trusts). */
export function openRoot(path: string): number {
  const fd = openSync(path, O_RDONLY | O_DIRECTORY | O_NOCTTY);
  if (!fstatSync(fd).isDirectory()) {
    closeSync(fd);
    throw new HostError("UnsupportedFileKind", `${path} is not a directory`);
  }
  return fd;
}

/** listAt lists the directory held by `dirFd` (names as raw bytes, unsorted). */
export function listAt(dirFd: number): Buffer[] {
  return readdirSync(`/proc/self/fd/${dirFd}`, { encoding: "buffer" });
}

/** lstatAt stats `name` in `dirFd` without following it; null when it is gone. */
export function lstatAt(dirFd: number, name: string | Buffer): Stats | null {
  return lstatSync(atPath(dirFd, name), { throwIfNoEntry: false }) ?? null;
}

/**
 * openFileAt opens the regular file `name` in `dirFd` for reading, never through a link and never
 * blocking on a FIFO; returns the descriptor and its fstat, or null when the entry is no longer a
 * regular file (gone, a link, a directory, anything else swapped in). The caller closes the fd.
 */
export function openFileAt(dirFd: number, name: string | Buffer): { fd: number; st: Stats } | null {
  return openKindAt(dirFd, name, READ_FLAGS, (st) => st.isFile());
}

/** openDirAt opens the directory `name` in `dirFd` without following a link; null when it is not one now. */
export function openDirAt(dirFd: number, name: string | Buffer): { fd: number; st: Stats } | null {
  return openKindAt(dirFd, name, DIR_FLAGS, (st) => st.isDirectory());
}

const GONE = new Set(["ENOENT", "ELOOP", "ENOTDIR", "ENXIO", "EISDIR", "EWOULDBLOCK", "EAGAIN"]);

function openKindAt(
  dirFd: number,
  name: string | Buffer,
  flags: number,
  ok: (st: Stats) => boolean,
): { fd: number; st: Stats } | null {
  let fd: number;
  try {
    fd = openSync(atPath(dirFd, name), flags);
  } catch (e) {
    if (GONE.has(errnoOf(e) ?? "")) return null;
    throw e;
  }
  const st = fstatSync(fd);
  if (ok(st)) return { fd, st };
  closeSync(fd);
  return null;
}

/** readlinkAt reads the target of the link `name` in `dirFd`; null when it is no longer a link. */
export function readlinkAt(dirFd: number, name: string | Buffer): Buffer | null {
  try {
    return readlinkSync(atPath(dirFd, name), { encoding: "buffer" });
  } catch (e) {
    if (["ENOENT", "EINVAL", "ENOTDIR"].includes(errnoOf(e) ?? "")) return null;
    throw e;
  }
}

/** createFileAt creates `name` in `dirFd` exclusively (O_EXCL: never through an existing link). */
export function createFileAt(dirFd: number, name: string, mode: number): number {
  return openSync(atPath(dirFd, name), CREATE_FLAGS, mode);
}

/** mkdirAt makes the directory `name` in `dirFd` and opens it (refusing anything swapped in). */
export function mkdirAt(dirFd: number, name: string, mode = 0o700): number {
  mkdirSync(atPath(dirFd, name), { mode });
  const d = openDirAt(dirFd, name);
  if (d === null) throw new HostError("WorkspaceChanged", `${name} changed while it was created`);
  return d.fd;
}

/** symlinkAt creates the link `name` in `dirFd` pointing at `target` (never follows it). */
export function symlinkAt(dirFd: number, target: string | Buffer, name: string): void {
  symlinkSync(target, atPath(dirFd, name));
}

/** renameAt renames `from` in `fromFd` to `to` in `toFd` (neither is followed). */
export function renameAt(fromFd: number, from: string, toFd: number, to: string): void {
  renameSync(atPath(fromFd, from), atPath(toFd, to));
}

/** removeTreeAt removes `name` in `dirFd` and everything below it, following no link. */
export function removeTreeAt(dirFd: number, name: string | Buffer): void {
  const st = lstatAt(dirFd, name);
  if (st === null) return;
  const d = st.isDirectory() ? openDirAt(dirFd, name) : null;
  if (d === null) {
    unlinkQuiet(dirFd, name);
    return;
  }
  try {
    for (const child of listAt(d.fd)) removeTreeAt(d.fd, child);
  } finally {
    closeSync(d.fd);
  }
  rmdirSync(atPath(dirFd, name));
}

function unlinkQuiet(dirFd: number, name: string | Buffer): void {
  try {
    unlinkSync(atPath(dirFd, name));
  } catch (e) {
    if (errnoOf(e) !== "ENOENT") throw e;
  }
}

/** closeQuiet closes a descriptor, ignoring errors (for cleanup paths). */
export function closeQuiet(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* already closed */
  }
}
