// §13.8 limits of the filesystem DAG: a directory object up to MAX_DIR_BYTES is read (past the
// 16 MiB default of the strict parser), one past it is BadFsTree; nesting up to MAX_TREE_DEPTH is
// walked, one deeper is BadFsTree.
import { test } from "node:test";
import assert from "node:assert/strict";
import { digestBytes, formatAmount, utf8, type Digest } from "@sbx/wire";
import {
  encodeFsDir,
  isSandboxAttestError,
  MAX_DIR_BYTES,
  MAX_TREE_DEPTH,
  parseFsDir,
  walkFsTree,
  type FsEntry,
} from "../../src/runrecord/index.ts";

test("a directory object past 16 MiB and within MAX_DIR_BYTES parses; one past the limit is BadFsTree", () => {
  const content = digestBytes(utf8("x"));
  const entries: FsEntry[] = [];
  for (let i = 0; i < 100_000; i++)
    entries.push({ name: `f-${i}`.padEnd(47, "x"), kind: "file", mode: 0o644, size: "1", digest: content });
  const bytes = encodeFsDir(entries);
  assert.ok(bytes.length > 16 * 1024 * 1024 && bytes.length <= MAX_DIR_BYTES);
  assert.equal(parseFsDir(bytes).entries.length, 100_000);
  const over = new Uint8Array(MAX_DIR_BYTES + 1).fill(0x20);
  assert.throws(
    () => parseFsDir(over),
    (e) => isSandboxAttestError(e, "BadFsTree"),
  );
});

test("walkFsTree walks MAX_TREE_DEPTH levels and refuses one more with BadFsTree", () => {
  const objects = new Map<Digest, Uint8Array>();
  const chain = (depth: number): Digest => {
    let bytes = encodeFsDir([]);
    let addr = digestBytes(bytes);
    objects.set(addr, bytes);
    for (let i = 0; i < depth; i++) {
      bytes = encodeFsDir([
        { name: "d", kind: "dir", mode: 0o755, size: formatAmount(BigInt(bytes.length)), digest: addr },
      ]);
      addr = digestBytes(bytes);
      objects.set(addr, bytes);
    }
    return addr;
  };
  const access = { getDir: (a: Digest) => objects.get(a) ?? null, checkLeaf: () => undefined };
  assert.equal(walkFsTree(chain(MAX_TREE_DEPTH), access).dirs, MAX_TREE_DEPTH + 1);
  assert.throws(
    () => walkFsTree(chain(MAX_TREE_DEPTH + 1), access),
    (e) => isSandboxAttestError(e, "BadFsTree"),
  );
});
