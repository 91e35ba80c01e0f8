// §13.8 Restore of a snapshot, verified object by object: every directory object is checked against
// its address before it is read, and every file is hashed while it is copied out and refused when
// its digest or size differs from the entry.
//
// The tree is built in a fresh temporary sibling of the destination and renamed into place only when
// it is whole, so a failed restore leaves nothing behind (the sibling is removed) and a reader never
// sees half a tree. Every step is relative to the descriptor of the directory being filled
// (../fsat/at.ts): files are created with O_EXCL|O_NOFOLLOW, so a link the restore itself created
// (or anything else that appeared) is never written through, and paths stay short at any depth.
import { closeSync, fchmodSync, fsyncSync, openSync, lstatSync, readdirSync, mkdirSync } from "node:fs";
import { basename, dirname } from "node:path";
import { randomBytes } from "node:crypto";
import { fromUtf8, parseAmount, type Digest } from "@sbx/wire";
import { parseFsDir, SandboxAttestError, type FsEntry } from "@sbx/sandbox-attest/runrecord";
import { HostError, isHostError } from "../errors.ts";
import { hashOpenFile } from "../fsat/tree.ts";
import {
  closeQuiet,
  createFileAt,
  errnoOf,
  mkdirAt,
  openRoot,
  removeTreeAt,
  renameAt,
  symlinkAt,
} from "../fsat/at.ts";
import { writeFully } from "../store/fault.ts";
import type { FileStore } from "../store/filestore.ts";

function missing(addr: Digest, path: string): never {
  throw new SandboxAttestError("ObjectMissing", `object ${addr} (${path}) is not in the store`);
}

function openObject(store: FileStore, addr: Digest, path: string): number {
  try {
    return openSync(store.objectPath(addr), "r");
  } catch (e) {
    if (errnoOf(e) === "ENOENT") missing(addr, path);
    throw e;
  }
}

function restoreFile(store: FileStore, e: FsEntry, dirFd: number, path: string): void {
  const inFd = openObject(store, e.digest, path);
  try {
    const outFd = createFileAt(dirFd, e.name, 0o600);
    try {
      const r = hashOpenFile(inFd, Number.MAX_SAFE_INTEGER, (c) => writeFully(outFd, c, null, "restore"));
      if (r.digest !== e.digest || BigInt(r.size) !== parseAmount(e.size))
        throw new SandboxAttestError(
          "ObjectMismatch",
          `${path}: stored object ${e.digest} does not match its entry`,
        );
      fchmodSync(outFd, e.mode);
    } finally {
      closeSync(outFd);
    }
  } finally {
    closeSync(inFd);
  }
}

function restoreLink(store: FileStore, e: FsEntry, dirFd: number, path: string): void {
  const target = store.getObjectSync(e.digest) ?? missing(e.digest, path);
  if (BigInt(target.length) !== parseAmount(e.size))
    throw new SandboxAttestError("ObjectMismatch", `${path}: link target is not its stated size`);
  symlinkAt(dirFd, fromUtf8(target), e.name);
}

function restoreDirObject(
  store: FileStore,
  addr: Digest,
  dirFd: number,
  path: string,
  size: bigint | null,
): void {
  const bytes = store.getObjectSync(addr) ?? missing(addr, path || "/");
  if (size !== null && BigInt(bytes.length) !== size)
    throw new SandboxAttestError("ObjectMismatch", `directory ${path} is not its stated size`);
  for (const e of parseFsDir(bytes).entries) {
    const p = `${path}/${e.name}`;
    if (e.kind === "file") restoreFile(store, e, dirFd, p);
    else if (e.kind === "symlink") restoreLink(store, e, dirFd, p);
    else {
      const child = mkdirAt(dirFd, e.name, 0o700);
      try {
        restoreDirObject(store, e.digest, child, p, parseAmount(e.size));
        fchmodSync(child, e.mode); // last, so a read-only directory is filled first
      } finally {
        closeSync(child);
      }
    }
  }
}

/**
 * restoreSnapshot recreates the tree `fsRoot` as `dest`, which must be absent or an empty directory
 * (`RestoreTargetNotEmpty`). Refuses a missing object (`ObjectMissing`), an object that does not match
 * its address or stated size (`ObjectMismatch`) and a malformed directory (`BadFsTree`); an OS error
 * is `RestoreFailed`. On any refusal nothing is left behind and `dest` is as it was.
 */
export function restoreSnapshot(store: FileStore, fsRoot: Digest, dest: string): void {
  let parentFd: number;
  try {
    const st = lstatSync(dest, { throwIfNoEntry: false });
    if (st !== undefined && (!st.isDirectory() || readdirSync(dest).length > 0))
      throw new HostError("RestoreTargetNotEmpty", `${dest} is not an empty directory`);
    mkdirSync(dirname(dest), { recursive: true });
    parentFd = openRoot(dirname(dest));
  } catch (e) {
    throw coded(e, dest);
  }
  const tmp = `.sbx-restore-${process.pid}-${randomBytes(8).toString("hex")}`;
  try {
    const rootFd = mkdirAt(parentFd, tmp, 0o700);
    try {
      restoreDirObject(store, fsRoot, rootFd, "", null);
      fchmodSync(rootFd, 0o755);
    } finally {
      closeSync(rootFd);
    }
    publish(parentFd, tmp, basename(dest), dest);
  } catch (e) {
    cleanup(parentFd, tmp);
    throw coded(e, dest);
  } finally {
    closeQuiet(parentFd);
  }
}

function publish(parentFd: number, tmp: string, name: string, dest: string): void {
  try {
    renameAt(parentFd, tmp, parentFd, name); // replaces an empty directory, refuses a non-empty one
  } catch (e) {
    const code = errnoOf(e);
    if (code === "ENOTEMPTY" || code === "EEXIST")
      throw new HostError("RestoreTargetNotEmpty", `${dest} is not empty`, { cause: e });
    throw e;
  }
  fsyncSync(parentFd);
}

function cleanup(parentFd: number, tmp: string): void {
  try {
    removeTreeAt(parentFd, tmp);
  } catch {
    /* the refusal below is what the caller needs; a leftover .sbx-restore-* sibling is named as ours */
  }
}

function coded(e: unknown, dest: string): unknown {
  if (isHostError(e) || e instanceof SandboxAttestError || errnoOf(e) === undefined) return e;
  return new HostError("RestoreFailed", `restore into ${dest}: ${errnoOf(e)}`, { cause: e });
}
