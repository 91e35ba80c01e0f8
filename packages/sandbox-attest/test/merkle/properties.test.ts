// The fast tree code against the literal RFC recursions (test/merkle/reference.ts), on random trees,
// for both hashers; and every proof the fast code makes verifies, while broken ones are refused.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { isSandboxAttestError } from "../../src/errors.ts";
import {
  blake3Hasher,
  CompactRange,
  MerkleTree,
  rootOf,
  sha256Hasher,
  verifyConsistency,
  verifyInclusion,
  verifySubtreeConsistency,
  verifySubtreeInclusion,
  type MerkleHasher,
} from "@sbx/sandbox-attest/merkle";
import { refMTH, refPATH, refPROOF, refSUBTREE_SUBPROOF } from "./reference.ts";

const hashers: MerkleHasher[] = [blake3Hasher, sha256Hasher];
// Distinct leaves (the position is part of the data), so moving an index is always a real change.
const leavesArb = (max: number) =>
  fc
    .array(fc.uint8Array({ maxLength: 40 }), { minLength: 1, maxLength: max })
    .map((ds) => ds.map((d, i) => Uint8Array.from([i, ...d])));
const runs = { numRuns: 60 };

function build(h: MerkleHasher, D: readonly Uint8Array[]): MerkleTree<Uint8Array> {
  return new MerkleTree(
    h,
    D.map((d) => h.leaf(d)),
  );
}

function refuses(code: string, fn: () => void): boolean {
  try {
    fn();
    return false;
  } catch (e) {
    return isSandboxAttestError(e) && e.code === code;
  }
}

/** Systematic breaks of a proof: each element with one bit flipped, one removed, one added. */
function broken(proof: readonly Uint8Array[]): Uint8Array[][] {
  const out: Uint8Array[][] = [];
  proof.forEach((p, i) => {
    const q = p.slice();
    q[i % q.length]! ^= 1;
    out.push(proof.map((x, j) => (j === i ? q : x)));
    out.push(proof.filter((_, j) => j !== i));
  });
  out.push([...proof, new Uint8Array(32)]);
  return out;
}

for (const h of hashers) {
  test(`${h.name}: roots equal MTH for sizes 0..70, also from CompactRange and every earlier size`, () => {
    const D = Array.from({ length: 70 }, (_, i) => new Uint8Array([i, i * 7, 255 - i]));
    const tree = build(h, D);
    const range = new CompactRange(h);
    for (let n = 0; n <= D.length; n++) {
      const want = refMTH(h, D.slice(0, n));
      assert.deepEqual(
        rootOf(
          h,
          D.slice(0, n).map((d) => h.leaf(d)),
        ),
        want,
        `rootOf n=${n}`,
      );
      assert.deepEqual(tree.root(n), want, `tree.root(${n})`);
      assert.deepEqual(range.root(), want, `CompactRange n=${n}`);
      if (n < D.length) range.append(h.leaf(D[n]!));
    }
  });

  test(`${h.name}: inclusion proofs equal PATH and verify; broken ones are refused`, () => {
    fc.assert(
      fc.property(leavesArb(80), fc.nat(), (D, r) => {
        const tree = build(h, D);
        const n = D.length;
        const m = r % n;
        const proof = tree.inclusionProof(m);
        assert.deepEqual(proof, refPATH(h, m, D));
        const root = tree.root();
        verifyInclusion(h, m, n, tree.leaf(m), proof, root);
        for (const bad of broken(proof))
          assert.ok(
            refuses("InclusionProofInvalid", () => verifyInclusion(h, m, n, tree.leaf(m), bad, root)),
          );
        for (const i of [m - 1, m + 1])
          if (i >= 0)
            assert.ok(
              refuses("InclusionProofInvalid", () => verifyInclusion(h, i, n, tree.leaf(m), proof, root)),
              `index ${i}`,
            );
      }),
      runs,
    );
  });

  test(`${h.name}: inclusion proofs at earlier sizes equal PATH over the prefix`, () => {
    fc.assert(
      fc.property(leavesArb(60), fc.nat(), fc.nat(), (D, a, b) => {
        const tree = build(h, D);
        const n = 1 + (a % D.length);
        const m = b % n;
        assert.deepEqual(tree.inclusionProof(m, n), refPATH(h, m, D.slice(0, n)));
      }),
      runs,
    );
  });

  test(`${h.name}: consistency proofs equal PROOF and verify; broken ones are refused`, () => {
    fc.assert(
      fc.property(leavesArb(80), fc.nat(), fc.nat(), (D, a, b) => {
        const tree = build(h, D);
        const n = 1 + (a % D.length);
        const m = 1 + (b % n);
        const proof = tree.consistencyProof(m, n);
        assert.deepEqual(proof, refPROOF(h, m, D.slice(0, n)));
        const [r1, r2] = [tree.root(m), tree.root(n)];
        verifyConsistency(h, m, n, r1, r2, proof);
        verifySubtreeConsistency(h, 0, m, n, r1, r2, proof);
        const bads = m === n ? [[new Uint8Array(32)]] : broken(proof);
        for (const bad of bads) {
          assert.ok(refuses("ConsistencyProofInvalid", () => verifyConsistency(h, m, n, r1, r2, bad)));
          assert.ok(
            refuses("ConsistencyProofInvalid", () => verifySubtreeConsistency(h, 0, m, n, r1, r2, bad)),
          );
        }
        // Changed sizes are not checked here: a head whose size is wrong can be consistent with a
        // proof by structure alone (size 3 read as size 4), which is why heads bind their size.
        if (m < n)
          assert.ok(
            refuses("ConsistencyProofInvalid", () => verifyConsistency(h, m, n, r2, r1, proof)),
            "swapped roots",
          );
      }),
      runs,
    );
  });

  test(`${h.name}: subtree proofs equal the draft's SUBTREE_PROOF and verify`, () => {
    fc.assert(
      fc.property(leavesArb(80), fc.nat(), fc.nat(), fc.nat(), (D, a, b, c) => {
        const tree = build(h, D);
        const n = 1 + (a % D.length);
        // A random valid subtree of the first n leaves: an aligned block, cut short on the right.
        const width = 2 ** (b % (Math.floor(Math.log2(n)) + 1));
        const start = width * (c % Math.ceil(n / width));
        const end = Math.min(n, start + width) - (c % Math.max(1, Math.min(n, start + width) - start));
        if (end <= start) return;
        const proof = tree.subtreeConsistencyProof(start, end, n);
        assert.deepEqual(proof, refSUBTREE_SUBPROOF(h, start, end, D.slice(0, n), true));
        const sub = tree.rangeRoot({ begin: start, end });
        verifySubtreeConsistency(h, start, end, n, sub, tree.root(n), proof);
        for (const bad of broken(proof))
          assert.ok(
            refuses("ConsistencyProofInvalid", () =>
              verifySubtreeConsistency(h, start, end, n, sub, tree.root(n), bad),
            ),
          );
        const i = start + (c % (end - start));
        const ip = tree.subtreeInclusionProof(i, start, end);
        assert.deepEqual(ip, refPATH(h, i - start, D.slice(start, end)));
        verifySubtreeInclusion(h, i, start, end, tree.leaf(i), ip, sub);
      }),
      runs,
    );
  });
}

test("a million leaves: streaming root equals the stored tree's root at sizes around powers of two", () => {
  const h = blake3Hasher;
  const leaves = Array.from({ length: 1 << 12 }, (_, i) => h.leaf(new Uint8Array([i & 255, i >> 8])));
  const tree = new MerkleTree(h, leaves);
  for (const n of [1, 2, 3, 4095, 4096, 2049, 1025])
    assert.deepEqual(rootOf(h, leaves.slice(0, n)), tree.root(n), `n=${n}`);
  // One pass over 2^20 + 3 leaves reuses one leaf hash: checks the O(log n) path, not the content.
  const leaf = leaves[0]!;
  const big = rootOf(
    h,
    (function* () {
      for (let i = 0; i < (1 << 20) + 3; i++) yield leaf;
    })(),
  );
  assert.equal(big.length, 32);
});
