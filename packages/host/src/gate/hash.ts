// §5.5.5 Hashing a file the gate was asked about: BLAKE3 of its bytes, read through the descriptor
// the kernel handed the helper, checked against the stat key the helper saw.
import { open } from "node:fs/promises";
import { createBlake3, formatDigest, type Digest } from "@sbx/wire";
import { elfFacts, type ElfFacts } from "./elf.ts";

/** The helper's cache key: device, inode, size, mtime and ctime (seconds and nanoseconds). */
export interface StatKey {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

/** What hashing one file yields. */
export interface Hashed extends ElfFacts {
  readonly digest: Digest;
  /** False when the file's stat no longer matches the key the helper saw. */
  readonly sameFile: boolean;
}

const CHUNK = 1 << 20;

/** hashFile hashes the file at `path` (§5.5.5); throws the fs error when it cannot be read. */
export async function hashFile(path: string, want?: StatKey): Promise<Hashed> {
  const fh = await open(path, "r");
  try {
    const st = await fh.stat({ bigint: true });
    const sameFile =
      want === undefined ||
      (st.dev === want.dev &&
        st.ino === want.ino &&
        st.size === want.size &&
        st.mtimeNs === want.mtimeNs &&
        st.ctimeNs === want.ctimeNs);
    const h = createBlake3();
    const buf = Buffer.allocUnsafe(CHUNK);
    for (let pos = 0; ;) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
      if (bytesRead === 0) break;
      h.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
    const facts = await elfFacts(fh);
    const after = await fh.stat({ bigint: true });
    return { digest: formatDigest(h.digest()), sameFile: sameFile && after.ctimeNs === st.ctimeNs, ...facts };
  } finally {
    await fh.close();
  }
}
