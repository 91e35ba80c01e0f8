// Merkle benchmarks (§8.1): the root over 1,000,000 leaves, and inclusion-proof verification per
// second in a tree of 1,000,000 leaves, for the wire's BLAKE3 tree. The anchor is node's SHA-256
// (node:crypto, OpenSSL) plugged into the very same tree code through hasherFrom, measured in the
// same run, so the ratio isolates the hash. @noble/hashes SHA-256 (the library's browser-safe
// default for the published vectors) is shown against the same anchor. Figures are medians.
import { createHash } from "node:crypto";
import { blake3Backend } from "@sbx/wire";
import {
  blake3Hasher,
  hasherFrom,
  MerkleTree,
  rootOf,
  sha256Hasher,
  verifyInclusion,
  type MerkleHasher,
} from "@sbx/sandbox-attest/merkle";
import { rate, row, timeRuns } from "./measure.ts";

const LEAVES = Number(process.env.BENCH_MERKLE_LEAVES ?? 1_000_000);
const PROOFS = 2000;

/** Leaf data: LEAVES distinct 64-byte records, made once and shared by every hasher. */
function leafData(): Uint8Array[] {
  return Array.from({ length: LEAVES }, (_, i) => {
    const d = new Uint8Array(64);
    new DataView(d.buffer).setUint32(0, i);
    return d;
  });
}

/** rootSeconds times rootOf over all leaves, leaf hashing included (median of 3). */
function rootSeconds(h: MerkleHasher, data: readonly Uint8Array[]): number {
  return timeRuns(3, () =>
    rootOf(
      h,
      data.map((d) => h.leaf(d)),
    ),
  );
}

/** verifySeconds builds the tree once, then times verifying PROOFS proofs of spread-out leaves. */
function verifySeconds(h: MerkleHasher, data: readonly Uint8Array[]): number {
  const tree = new MerkleTree(
    h,
    data.map((d) => h.leaf(d)),
  );
  const root = tree.root();
  const picks = Array.from(
    { length: PROOFS },
    (_, k) => Math.floor((k * 7919 * LEAVES) / PROOFS / 7919) % LEAVES,
  );
  const cases = picks.map((i) => ({ i, leaf: tree.leaf(i), proof: tree.inclusionProof(i) }));
  return timeRuns(5, () => {
    for (const c of cases) verifyInclusion(h, c.i, LEAVES, c.leaf, c.proof, root);
  });
}

export default function merkleBench(): Promise<void> {
  const nodeSha = hasherFrom("sha256-node", (d) => createHash("sha256").update(d).digest());
  const hashers: [string, MerkleHasher][] = [
    ["SHA-256 node:crypto (anchor)", nodeSha],
    [`BLAKE3 @sbx/wire (${blake3Backend}; JS below 769 B)`, blake3Hasher],
    ["SHA-256 @noble/hashes", sha256Hasher],
  ];
  const data = leafData();
  console.log(
    `Merkle root over ${LEAVES.toLocaleString("en")} leaves of 64 bytes, leaf hashing included (median of 3):`,
  );
  const roots = hashers.map(([name, h]) => [name, rootSeconds(h, data)] as const);
  for (const [name, t] of roots) row(name, `${(t * 1000).toFixed(0)} ms`, roots[0]![1] / t, "anchor speed");
  console.log(
    `Inclusion-proof verification, tree of ${LEAVES.toLocaleString("en")} leaves (${PROOFS} proofs, median of 5):`,
  );
  const verifs = hashers.map(([name, h]) => [name, verifySeconds(h, data)] as const);
  for (const [name, t] of verifs) row(name, rate(PROOFS / t), verifs[0]![1] / t, "anchor speed");
  return Promise.resolve();
}
