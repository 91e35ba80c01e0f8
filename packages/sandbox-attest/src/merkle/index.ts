// @sbx/sandbox-attest/merkle — RFC 9162 Merkle trees (sandbox-attest §8.1), used by the replay
// journal (§8) and fleet records (§16).
//
// Layers, each usable on its own:
//
//  1. shape.ts — the tree shape as pure index arithmetic. `inclusionPath`, `consistencyPath` and
//     `subtreeConsistencyPath` return, in proof order, the leaf ranges [begin, end) whose subtree
//     roots MTH(D[begin:end]) make up a proof; `perfectRanges` splits such a range into perfect
//     subtrees; `splitPoint` is RFC 9162's k. No hashing, no node type.
//  2. tree.ts / verify.ts / subtree.ts — the generic core over any node type N through
//     `TreeOps<N>` ({combine, empty, equal}): `rootOf` and `CompactRange` (streaming roots, O(log n)
//     memory), `StoredTree` (roots of earlier sizes, inclusion / consistency / subtree proofs,
//     over an abstract node(level, index) accessor), `MerkleTree` (a StoredTree keeping node
//     objects in arrays), and the verifiers `rootFromInclusion`, `verifyInclusion`, `verifyConsistency` (RFC 9162
//     §2.1.3.2 and §2.1.4.2 literally), `verifySubtreeInclusion`, `verifySubtreeConsistency`
//     (draft-ietf-plants-merkle-tree-certs §4.3–§4.4). Positions are 64-bit.
//  3. hasher.ts / head.ts — byte hashes: `MerkleHasher` (leaf 0x00, node 0x01), `blake3Hasher`
//     (the wire), `sha256Hasher` (@noble/hashes, for the RFC 6962 vectors), `hasherFrom` to inject
//     any other hash (e.g. node:crypto); tree heads `{size, root}` and the proof checks that take a
//     head, never a root alone, and refuse wrong-length hashes before hashing.
//
// Building another tree on this core (the §16 fleet tree, whose nodes carry (hash, energy-sum)):
// define N = {hash, energy} and TreeOps<N> with combine(l, r) = {hash: H(0x01 ‖ l.hash ‖ r.hash …),
// energy: l.energy + r.energy}; build leaves yourself; then `new MerkleTree(ops, leaves)`,
// `tree.inclusionProof(i)`, and `verifyInclusion(ops, i, size, leaf, proof, root)` work unchanged.
// A tree that stores its nodes otherwise extends StoredTree and supplies node(level, index): the
// fleet tree keeps 40-byte records in flat buffers (fleet/tree.ts) and reuses all the proof code.
// A verifier that only has hashes on the wire can map proof elements to N before verifying.
export { blake3Hasher, sha256Hasher, hasherFrom } from "./hasher.ts";
export type { TreeOps, MerkleHasher, HashFunction } from "./hasher.ts";
export {
  splitPoint,
  isPerfect,
  isValidSubtree,
  perfectRanges,
  inclusionPath,
  consistencyPath,
  subtreeConsistencyPath,
} from "./shape.ts";
export type { LeafRange } from "./shape.ts";
export { CompactRange, MerkleTree, StoredTree, rootOf } from "./tree.ts";
export {
  rootFromInclusion,
  verifyInclusion,
  verifyConsistency,
  verifySubtreeInclusion,
  isValidSubtreeU64,
  toU64,
} from "./verify.ts";
export type { Position } from "./verify.ts";
export { verifySubtreeConsistency } from "./subtree.ts";
export {
  assertTreeHead,
  parseTreeHead,
  formatTreeHead,
  verifyInclusionProof,
  verifyConsistencyProof,
  verifySubtreeInclusionProof,
  verifySubtreeConsistencyProof,
} from "./head.ts";
export type { TreeHead, SubtreeHead, TreeHeadJson } from "./head.ts";
