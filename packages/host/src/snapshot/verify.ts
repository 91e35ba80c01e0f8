// §13.8 Verification of a stored snapshot tree without restoring it: every directory object checked
// against its address, every leaf object re-hashed (streamed) and its size compared with its entry.
import { closeSync, existsSync, openSync } from "node:fs";
import { type Digest } from "@sbx/wire";
import { SandboxAttestError, walkFsTree, type FsTreeStats } from "@sbx/sandbox-attest/runrecord";
import { hashOpenFile } from "../fsat/tree.ts";
import type { FileStore } from "../store/filestore.ts";

/** hashStoredObject streams an object file through BLAKE3; returns its digest and size, or null when absent. */
export function hashStoredObject(store: FileStore, address: Digest): { digest: Digest; size: bigint } | null {
  const p = store.objectPath(address);
  if (!existsSync(p)) return null;
  const fd = openSync(p, "r");
  try {
    const r = hashOpenFile(fd, Number.MAX_SAFE_INTEGER);
    return { digest: r.digest, size: BigInt(r.size) };
  } finally {
    closeSync(fd);
  }
}

/**
 * checkLeafFound checks a leaf object as found in a store (its digest and size, or null when absent)
 * against the tree entry that names it: `ObjectMissing`, then `ObjectMismatch` (§13.8).
 */
export function checkLeafFound(
  got: { digest: Digest; size: bigint } | null,
  a: Digest,
  size: bigint,
  path: string,
): void {
  if (got === null)
    throw new SandboxAttestError("ObjectMissing", `object ${a} (${path}) is not in the store`);
  if (got.digest !== a || got.size !== size)
    throw new SandboxAttestError(
      "ObjectMismatch",
      `object ${a} (${path}) does not match its address or size`,
    );
}

/**
 * verifyStoredTree walks the tree `fsRoot` in the store (§13.8): `ObjectMissing` for an absent
 * object, `ObjectMismatch` for one whose bytes or size differ, `BadFsTree` for a malformed directory.
 */
export function verifyStoredTree(store: FileStore, fsRoot: Digest): FsTreeStats {
  return walkFsTree(fsRoot, {
    getDir: (a) => store.getObjectSync(a),
    checkLeaf: (a, size, _kind, path) => {
      const got = hashStoredObject(store, a);
      checkLeafFound(got, a, size, path);
    },
  });
}
