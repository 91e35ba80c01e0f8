// Every SHA-256 vector in rfc6962-sha256-vectors.json reproduces: hasher values, roots by size,
// node hashes, published and exhaustive inclusion and consistency proofs, byte-leaf roots, and the
// draft-ietf-plants-merkle-tree-certs subtree digests (a rolling SHA-256 over every proof).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fromHex, toHex, utf8 } from "@sbx/wire";
import {
  hasherFrom,
  isValidSubtree,
  MerkleTree,
  sha256Hasher as h,
  verifyConsistencyProof,
  verifyInclusionProof,
} from "@sbx/sandbox-attest/merkle";
import { rfc6962Dir } from "./shared.ts";

interface InclusionCase {
  leafIndex: number;
  treeSize: number;
  leafHash: string;
  root: string;
  proof: string[];
}
interface ConsistencyCase {
  size1: number;
  size2: number;
  root1: string;
  root2: string;
  proof: string[];
}
interface Vectors {
  leaves: string[];
  rootsBySize: string[];
  nodeHashes: string[][];
  hasher: Record<string, string>;
  inclusionPublished: InclusionCase[];
  inclusionAll: InclusionCase[];
  consistencyPublished: ConsistencyCase[];
  consistencyAll: ConsistencyCase[];
  byteLeafRoots: { rootsBySize: Record<string, string> };
  plantsSubtreeVectorDigests: { subtreeHash: string; subtreeInclusion: string; subtreeConsistency: string };
}
const V = JSON.parse(readFileSync(join(rfc6962Dir, "rfc6962-sha256-vectors.json"), "utf8")) as Vectors;
const tree = new MerkleTree(
  h,
  V.leaves.map((d) => h.leaf(fromHex(d))),
);

test("hasher: empty root, leaf and node hashes", () => {
  assert.equal(toHex(h.empty()), V.hasher.emptyRoot);
  assert.equal(toHex(h.leaf(new Uint8Array(0))), V.hasher["leafHash(empty)"]);
  assert.equal(toHex(h.leaf(utf8("L123456"))), V.hasher["leafHash('L123456')"]);
  assert.equal(toHex(h.combine(utf8("N123"), utf8("N456"))), V.hasher["nodeHash('N123','N456')"]);
});

test("node:crypto SHA-256 injected through hasherFrom gives the same roots", () => {
  const nodeSha = hasherFrom("sha256-node", (d) => createHash("sha256").update(d).digest());
  const t2 = new MerkleTree(
    nodeSha,
    V.leaves.map((d) => nodeSha.leaf(fromHex(d))),
  );
  V.rootsBySize.forEach((r, n) => assert.equal(toHex(t2.root(n)), r, `size ${n}`));
});

test("roots by size 0..8 and the node hashes of every level", () => {
  V.rootsBySize.forEach((r, n) => assert.equal(toHex(tree.root(n)), r, `size ${n}`));
  V.nodeHashes.forEach((level, lv) =>
    level.forEach((hex, i) =>
      assert.equal(
        toHex(tree.rangeRoot({ begin: i << lv, end: (i + 1) << lv })),
        hex,
        `level ${lv} node ${i}`,
      ),
    ),
  );
});

test("byte-leaf roots for sizes 0..16", () => {
  const t = new MerkleTree(
    h,
    Array.from({ length: 16 }, (_, i) => h.leaf(Uint8Array.of(i))),
  );
  for (const [n, r] of Object.entries(V.byteLeafRoots.rootsBySize))
    assert.equal(toHex(t.root(Number(n))), r, `size ${n}`);
});

for (const [name, cases] of [
  ["published", V.inclusionPublished],
  ["all", V.inclusionAll],
] as const)
  test(`inclusion proofs (${name}, ${cases.length}) are generated exactly and verify`, () => {
    cases.forEach((c, i) => {
      assert.equal(toHex(tree.leaf(c.leafIndex)), c.leafHash, `case ${i}`);
      assert.deepEqual(tree.inclusionProof(c.leafIndex, c.treeSize).map(toHex), c.proof, `case ${i}`);
      verifyInclusionProof(
        h,
        { size: c.treeSize, root: fromHex(c.root) },
        c.leafIndex,
        fromHex(c.leafHash),
        c.proof.map(fromHex),
      );
    });
  });

for (const [name, cases] of [
  ["published", V.consistencyPublished],
  ["all", V.consistencyAll],
] as const)
  test(`consistency proofs (${name}, ${cases.length}) are generated exactly and verify`, () => {
    cases.forEach((c, i) => {
      assert.deepEqual(tree.consistencyProof(c.size1, c.size2).map(toHex), c.proof, `case ${i}`);
      verifyConsistencyProof(
        h,
        { size: c.size1, root: fromHex(c.root1) },
        { size: c.size2, root: fromHex(c.root2) },
        c.proof.map(fromHex),
      );
    });
  });

/** rolling returns the SHA-256 of lines written by `each`, as the draft's appendix computes it. */
function rolling(each: (line: (s: string) => void) => void): string {
  const sum = createHash("sha256");
  each((s) => sum.update(s + "\n"));
  return sum.digest("hex");
}
const proofLine = (prefix: string, proof: readonly Uint8Array[]): string =>
  prefix + proof.map((p) => " " + toHex(p)).join("");

test("draft-ietf-plants-merkle-tree-certs subtree vectors over 130 one-byte leaves", () => {
  const max = 130;
  const t = new MerkleTree(
    h,
    Array.from({ length: max }, (_, i) => h.leaf(Uint8Array.of(i))),
  );
  const subtrees = (n: number, f: (s: number, e: number) => void): void => {
    for (let end = 0; end <= n; end++)
      for (let start = 0; start <= end; start++) if (isValidSubtree(start, end)) f(start, end);
  };
  const D = V.plantsSubtreeVectorDigests;
  assert.equal(
    rolling((w) => subtrees(max, (s, e) => w(`[${s}, ${e}) ${toHex(t.rangeRoot({ begin: s, end: e }))}`))),
    D.subtreeHash,
  );
  const incl = rolling((w) =>
    subtrees(max, (s, e) => {
      for (let i = s; i < e; i++) w(proofLine(`${i} [${s}, ${e})`, t.subtreeInclusionProof(i, s, e)));
    }),
  );
  assert.equal(incl, D.subtreeInclusion);
  const cons = rolling((w) => {
    for (let n = 0; n <= max; n++)
      subtrees(n, (s, e) => w(proofLine(`[${s}, ${e}) ${n}`, t.subtreeConsistencyProof(s, e, n))));
  });
  assert.equal(cons, D.subtreeConsistency);
});
