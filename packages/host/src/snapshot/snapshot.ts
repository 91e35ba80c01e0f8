// §13.8 Snapshot of a real workspace directory into the file-backed store: each file's content and
// each symlink target becomes an object, each directory a canonical directory object, bottom up; the
// root directory object's address is the snapshot's filesystem root.
//
// The workspace belongs to a unit that may still be running, so the walk never follows a link and
// never uses a path the unit could redirect: every entry is opened relative to its parent directory's
// descriptor with O_NOFOLLOW (../fsat/at.ts), checked with fstat, and its content is hashed from that
// descriptor. An entry that vanishes between listing and opening is left out (it was removed during
// the walk); one that changes kind is looked at again, up to RETRIES times, then `WorkspaceChanged`.
// A file is read up to the size fstat gave when it was opened, so a writer cannot make it endless.
//
// Refused: device nodes, FIFOs and sockets (`UnsupportedFileKind`); setuid, setgid and sticky bits
// (`UnsupportedMode`: the mode would not survive restore unchanged); names that are not UTF-8 or
// longer than 255 bytes, and link targets that are not UTF-8 (`UnsupportedName`); a directory whose
// object would exceed MAX_DIR_BYTES (`DirectoryTooLarge`) or nesting deeper than MAX_TREE_DEPTH
// (`TreeTooDeep`), refused here so that what a suspend writes a resume can always read; an OS
// error reading the workspace (`WorkspaceUnreadable`). Not recorded: owners, times, extended
// attributes; hard links are stored as separate files (same content object).
//
// Every object goes into the store's pack for this batch (hashed and stored in one pass over the
// bytes) and the pack is sealed once, at the end: the snapshot's durability costs two fsyncs. With
// a run's stat cache (./statcache.ts) a file unchanged since the run's last snapshot is not read.
import { closeSync, fstatSync, type BigIntStats, type Stats } from "node:fs";
import { formatAmount, type Digest } from "@sbx/wire";
import {
  encodeFsDir,
  isEntryName,
  MAX_DIR_BYTES,
  MAX_DIR_ENTRIES,
  MAX_TREE_DEPTH,
  type FsEntry,
} from "@sbx/sandbox-attest/runrecord";
import { HostError, isHostError } from "../errors.ts";
import { errnoOf, listAt, lstatAtNs, openDirAt, openFileAt, openRoot, readlinkAt } from "../fsat/at.ts";
import type { FileStore } from "../store/filestore.ts";
import { StatCache } from "./statcache.ts";

/** What a snapshot produced: the root and what it holds. */
export interface SnapshotResult {
  readonly fs_root: Digest;
  readonly files: number;
  readonly dirs: number;
  readonly symlinks: number;
  readonly bytes: number;
  /** Files taken unread from the run's stat cache (0 without one). */
  readonly unread: number;
}

/** Options of a snapshot. */
export interface SnapshotOptions {
  /** The run whose stat cache to use and renew (§13.8): files unchanged since its last snapshot are not read. */
  readonly run?: Digest;
}

const strict = new TextDecoder("utf-8", { fatal: true });
const RETRIES = 8;

interface Walk {
  readonly store: FileStore;
  readonly cache: StatCache | null;
  readonly acc: { files: number; dirs: number; symlinks: number; bytes: number };
}

function entryName(raw: Buffer, dir: string): string {
  let name: string;
  try {
    name = strict.decode(raw);
  } catch {
    throw new HostError("UnsupportedName", `a name in ${dir || "/"} is not UTF-8`);
  }
  if (!isEntryName(name))
    throw new HostError(
      "UnsupportedName",
      `${JSON.stringify(name)} in ${dir || "/"} cannot be an entry name`,
    );
  return name;
}

function permBits(st: Stats | BigIntStats, path: string): number {
  const mode = Number(st.mode);
  if ((mode & 0o7000) !== 0)
    throw new HostError(
      "UnsupportedMode",
      `${path} has setuid, setgid or sticky bits (${(mode & 0o7777).toString(8)})`,
    );
  return mode & 0o777;
}

function fileOf(w: Walk, name: string, mode: number, c: { digest: Digest; size: number }): FsEntry {
  w.acc.files++;
  w.acc.bytes += c.size;
  return { name, kind: "file", mode, size: formatAmount(BigInt(c.size)), digest: c.digest };
}

function fileEntry(w: Walk, dirFd: number, name: string, path: string, st: BigIntStats): FsEntry | "changed" {
  const cached = w.cache?.take(path, st) ?? null;
  if (cached !== null) return fileOf(w, name, permBits(st, path), cached);
  const f = openFileAt(dirFd, name);
  if (f === null) return "changed";
  try {
    const mode = permBits(f.st, path);
    const id = w.cache === null ? null : fstatSync(f.fd, { bigint: true });
    const { address, size } = w.store.putFdSync(f.fd, f.st.size, true);
    if (id !== null) w.cache?.read(path, id, address, size);
    return fileOf(w, name, mode, { digest: address, size });
  } finally {
    closeSync(f.fd);
  }
}

function linkEntry(w: Walk, dirFd: number, name: string, path: string): FsEntry | "changed" {
  const target = readlinkAt(dirFd, name);
  if (target === null) return "changed";
  try {
    strict.decode(target);
  } catch {
    throw new HostError("UnsupportedName", `the target of ${path} is not UTF-8`);
  }
  w.acc.symlinks++;
  return {
    name,
    kind: "symlink",
    mode: 0o777,
    size: formatAmount(BigInt(target.length)),
    digest: w.store.putObjectSync(target, true),
  };
}

function dirEntry(w: Walk, dirFd: number, name: string, path: string, depth: number): FsEntry | "changed" {
  const d = openDirAt(dirFd, name);
  if (d === null) return "changed";
  try {
    const mode = permBits(d.st, path);
    const child = visitDir(w, d.fd, path, depth + 1);
    return { name, kind: "dir", mode, size: formatAmount(BigInt(child.size)), digest: child.digest };
  } finally {
    closeSync(d.fd);
  }
}

// One entry: lstat says what to open, the opened descriptor says what it is. null: it is gone.
function entryOf(w: Walk, dirFd: number, name: string, path: string, depth: number): FsEntry | null {
  for (let i = 0; i < RETRIES; i++) {
    const st = lstatAtNs(dirFd, name);
    if (st === null) return null;
    let e: FsEntry | "changed";
    if (st.isFile()) e = fileEntry(w, dirFd, name, path, st);
    else if (st.isDirectory()) e = dirEntry(w, dirFd, name, path, depth);
    else if (st.isSymbolicLink()) e = linkEntry(w, dirFd, name, path);
    else throw new HostError("UnsupportedFileKind", `${path} is not a file, directory or symbolic link`);
    if (e !== "changed") return e;
  }
  throw new HostError("WorkspaceChanged", `${path} kept changing kind while it was snapshotted`);
}

function visitDir(w: Walk, dirFd: number, path: string, depth: number): { digest: Digest; size: number } {
  if (depth > MAX_TREE_DEPTH)
    throw new HostError("TreeTooDeep", `${path} is nested deeper than ${MAX_TREE_DEPTH} directories`);
  const names = listAt(dirFd);
  if (names.length > MAX_DIR_ENTRIES)
    throw new HostError("DirectoryTooLarge", `${path || "/"} has more than ${MAX_DIR_ENTRIES} entries`);
  const entries: FsEntry[] = [];
  for (const raw of names) {
    const name = entryName(raw, path);
    const e = entryOf(w, dirFd, name, `${path}/${name}`, depth);
    if (e !== null) entries.push(e);
  }
  const bytes = encodeFsDir(entries);
  if (bytes.length > MAX_DIR_BYTES)
    throw new HostError(
      "DirectoryTooLarge",
      `the directory object of ${path || "/"} would be ${bytes.length} bytes, more than ${MAX_DIR_BYTES}`,
    );
  w.acc.dirs++;
  return { digest: w.store.putObjectSync(bytes, true), size: bytes.length };
}

/**
 * snapshotDir stores the tree under `dir` (§13.8) and returns its filesystem root; durable when it
 * returns (the batch's pack is sealed). With `run`, files unchanged since that run's last snapshot
 * are taken from its stat cache unread, and the cache is renewed. Throws the HostError codes listed
 * above, and the store's `StoreWriteFailed` when the store cannot be written; never a raw OS error.
 */
export function snapshotDir(store: FileStore, dir: string, opts: SnapshotOptions = {}): SnapshotResult {
  let rootFd: number;
  try {
    rootFd = openRoot(dir);
  } catch (e) {
    throw coded(e, dir);
  }
  const cache = opts.run === undefined ? null : openCache(store, opts.run);
  const w: Walk = { store, cache, acc: { files: 0, dirs: 0, symlinks: 0, bytes: 0 } };
  try {
    const root = visitDir(w, rootFd, "", 0).digest;
    store.syncPending();
    saveCache(cache);
    return { fs_root: root, ...w.acc, unread: cache?.hits ?? 0 };
  } catch (e) {
    throw coded(e, dir);
  } finally {
    closeSync(rootFd);
  }
}

// The cache only saves reading: one that cannot be opened or saved means every file is read
// (a store that cannot be written refuses the snapshot itself, with its own code).
function openCache(store: FileStore, run: Digest): StatCache | null {
  try {
    return StatCache.open(store, run);
  } catch {
    return null;
  }
}

function saveCache(cache: StatCache | null): void {
  try {
    cache?.save();
  } catch {
    /* the next snapshot of the run reads every file */
  }
}

function coded(e: unknown, dir: string): unknown {
  if (isHostError(e) || errnoOf(e) === undefined) return e;
  return new HostError("WorkspaceUnreadable", `snapshot of ${dir}: ${errnoOf(e)}`, { cause: e });
}
