// §13.8 Restore of a snapshot into a fresh directory, verified object by object: every directory
// object is checked against its address before it is read, and every file is hashed while it is
// copied out and refused (and removed) when its digest or size differs from the entry.
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { join } from "node:path";
import { createBlake3, formatDigest, fromUtf8, parseAmount, type Digest } from "@sbx/wire";
import { parseFsDir, SandboxAttestError, type FsEntry } from "@sbx/sandbox-attest/runrecord";
import { HostError } from "../errors.ts";
import { writeFully } from "../store/fault.ts";
import type { FileStore } from "../store/filestore.ts";

const CHUNK = 1 << 20;

function missing(addr: Digest, path: string): never {
  throw new SandboxAttestError("ObjectMissing", `object ${addr} (${path}) is not in the store`);
}

function restoreFile(store: FileStore, e: FsEntry, dest: string): void {
  const src = store.objectPath(e.digest);
  if (!existsSync(src)) missing(e.digest, dest);
  const h = createBlake3();
  const buf = new Uint8Array(CHUNK);
  let size = 0n;
  const inFd = openSync(src, "r");
  const outFd = openSync(dest, "wx", 0o600);
  try {
    for (let n; (n = readSync(inFd, buf, 0, CHUNK, null)) > 0; size += BigInt(n)) {
      h.update(buf.subarray(0, n));
      writeFully(outFd, buf.subarray(0, n), null, "restore");
    }
  } finally {
    closeSync(inFd);
    closeSync(outFd);
  }
  if (formatDigest(h.digest()) !== e.digest || size !== parseAmount(e.size)) {
    rmSync(dest);
    throw new SandboxAttestError(
      "ObjectMismatch",
      `${dest}: stored object ${e.digest} does not match its entry`,
    );
  }
  chmodSync(dest, e.mode);
}

function restoreDirObject(store: FileStore, addr: Digest, dest: string, size: bigint | null): void {
  const bytes = store.getObjectSync(addr) ?? missing(addr, dest);
  if (size !== null && BigInt(bytes.length) !== size)
    throw new SandboxAttestError("ObjectMismatch", `directory ${dest} is not its stated size`);
  for (const e of parseFsDir(bytes).entries) {
    const p = join(dest, e.name);
    if (e.kind === "file") restoreFile(store, e, p);
    else if (e.kind === "symlink") {
      const target = store.getObjectSync(e.digest) ?? missing(e.digest, p);
      if (BigInt(target.length) !== parseAmount(e.size))
        throw new SandboxAttestError("ObjectMismatch", `${p}: link target is not its stated size`);
      symlinkSync(fromUtf8(target), p);
    } else {
      mkdirSync(p, { mode: 0o700 });
      restoreDirObject(store, e.digest, p, parseAmount(e.size));
      chmodSync(p, e.mode);
    }
  }
}

/**
 * restoreSnapshot recreates the tree `fsRoot` under `dest`, which must be absent or an empty
 * directory (`RestoreTargetNotEmpty`). Refuses a missing object (`ObjectMissing`), an object that does
 * not match its address or stated size (`ObjectMismatch`) and a malformed directory (`BadFsTree`).
 */
export function restoreSnapshot(store: FileStore, fsRoot: Digest, dest: string): void {
  if (existsSync(dest) && readdirSync(dest).length > 0)
    throw new HostError("RestoreTargetNotEmpty", `${dest} is not empty`);
  mkdirSync(dest, { recursive: true });
  restoreDirObject(store, fsRoot, dest, null);
}
