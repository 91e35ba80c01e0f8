// Test support: tamper with an object of a file store wherever it is kept, a loose file or a range
// of a pack (§13.7), as an attacker with write access to the store's folder could. A store opened
// before the tampering keeps the pack indexes it read: reopen it (FileStore.open) to see a pack
// rewritten by removeObject or replaceObject.
import {
  chmodSync,
  openSync,
  closeSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync,
  mkdirSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { parseDigest, formatDigest, type Digest } from "@sbx/wire";
import type { FileStore } from "../../src/store/index.ts";
import { PackIndex, PackWriter } from "../../src/store/pack.ts";

function located(store: FileStore, a: Digest): { path: string; offset: number; size: number } {
  const at = store.locate(a);
  if (at === null) throw new Error(`tamper: the store does not hold ${a}`);
  return at;
}

/** flipObjectByte flips one bit of byte `i` of the object's stored bytes, in place. */
export function flipObjectByte(store: FileStore, a: Digest, i = 0): void {
  const at = located(store, a);
  chmodSync(at.path, 0o644);
  const fd = openSync(at.path, "r+");
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, at.offset + i);
    b[0]! ^= 1;
    writeSync(fd, b, 0, 1, at.offset + i);
  } finally {
    closeSync(fd);
  }
}

// Rewrites the pack at `path` without the object `a` (a valid pack, so only the object is gone).
function dropFromPack(store: FileStore, path: string, a: Digest): void {
  const old = PackIndex.read(path);
  const w = new PackWriter(join(store.root, "tmp"));
  const keep = [...old.addresses()].map((r) => formatDigest(r)).filter((x) => x !== a);
  for (const x of keep) {
    const at = old.find(parseDigest(x))!;
    const fd = openSync(path, "r");
    try {
      w.appendFd(fd, at.offset, at.size, () => false);
    } finally {
      closeSync(fd);
    }
  }
  if (keep.length > 0) w.seal(dirname(path));
  else w.abandon();
  rmSync(path);
}

/** removeObject takes the object out of the store (its loose file, or its entry of its pack). */
export function removeObject(store: FileStore, a: Digest): void {
  const at = located(store, a);
  if (at.offset === 0) rmSync(at.path);
  else dropFromPack(store, at.path, a);
}

/** replaceObject makes the store hold `bytes` under `a`'s address (a loose file in place of it). */
export function replaceObject(store: FileStore, a: Digest, bytes: Uint8Array | string): void {
  removeObject(store, a);
  const p = store.objectPath(a);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, bytes);
}
