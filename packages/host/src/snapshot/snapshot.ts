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
import { closeSync, type Stats } from "node:fs";
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
import { errnoOf, listAt, lstatAt, openDirAt, openFileAt, openRoot, readlinkAt } from "../fsat/at.ts";
import type { FileStore } from "../store/filestore.ts";

/** What a snapshot produced: the root and what it holds. */
export interface SnapshotResult {
  readonly fs_root: Digest;
  readonly files: number;
  readonly dirs: number;
  readonly symlinks: number;
  readonly bytes: number;
}

const strict = new TextDecoder("utf-8", { fatal: true });
const RETRIES = 8;

interface Walk {
  readonly store: FileStore;
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

function permBits(st: Stats, path: string): number {
  if ((st.mode & 0o7000) !== 0)
    throw new HostError(
      "UnsupportedMode",
      `${path} has setuid, setgid or sticky bits (${(st.mode & 0o7777).toString(8)})`,
    );
  return st.mode & 0o777;
}

function fileEntry(w: Walk, dirFd: number, name: string, path: string): FsEntry | "changed" {
  const f = openFileAt(dirFd, name);
  if (f === null) return "changed";
  try {
    const mode = permBits(f.st, path);
    const { address, size } = w.store.putFdSync(f.fd, f.st.size, true);
    w.acc.files++;
    w.acc.bytes += size;
    return { name, kind: "file", mode, size: formatAmount(BigInt(size)), digest: address };
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
    const st = lstatAt(dirFd, name);
    if (st === null) return null;
    let e: FsEntry | "changed";
    if (st.isFile()) e = fileEntry(w, dirFd, name, path);
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
 * returns (deferred directory fsyncs are flushed). Throws the HostError codes listed above, and the
 * store's `StoreWriteFailed` when the store cannot be written; never a raw OS error.
 */
export function snapshotDir(store: FileStore, dir: string): SnapshotResult {
  const w: Walk = { store, acc: { files: 0, dirs: 0, symlinks: 0, bytes: 0 } };
  let rootFd: number;
  try {
    rootFd = openRoot(dir);
  } catch (e) {
    throw coded(e, dir);
  }
  try {
    const root = visitDir(w, rootFd, "", 0).digest;
    store.syncPending();
    return { fs_root: root, ...w.acc };
  } catch (e) {
    throw coded(e, dir);
  } finally {
    closeSync(rootFd);
  }
}

function coded(e: unknown, dir: string): unknown {
  if (isHostError(e) || errnoOf(e) === undefined) return e;
  return new HostError("WorkspaceUnreadable", `snapshot of ${dir}: ${errnoOf(e)}`, { cause: e });
}
