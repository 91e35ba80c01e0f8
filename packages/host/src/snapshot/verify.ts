// §13.8 Verification of a stored snapshot tree without restoring it: every directory object checked
// against its address, every leaf object re-hashed (streamed) and its size compared with its entry.
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { createBlake3, formatDigest, type Digest } from "@sbx/wire";
import { SandboxAttestError, walkFsTree, type FsTreeStats } from "@sbx/sandbox-attest/runrecord";
import type { FileStore } from "../store/filestore.ts";

const CHUNK = 1 << 20;

/** hashStoredObject streams an object file through BLAKE3; returns its digest and size, or null when absent. */
export function hashStoredObject(store: FileStore, address: Digest): { digest: Digest; size: bigint } | null {
  const p = store.objectPath(address);
  if (!existsSync(p)) return null;
  const fd = openSync(p, "r");
  const h = createBlake3();
  const buf = new Uint8Array(CHUNK);
  let size = 0n;
  try {
    for (let n; (n = readSync(fd, buf, 0, CHUNK, null)) > 0; size += BigInt(n)) h.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return { digest: formatDigest(h.digest()), size };
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
      if (got === null)
        throw new SandboxAttestError("ObjectMissing", `object ${a} (${path}) is not in the store`);
      if (got.digest !== a || got.size !== size)
        throw new SandboxAttestError(
          "ObjectMismatch",
          `object ${a} (${path}) does not match its address or size`,
        );
    },
  });
}
