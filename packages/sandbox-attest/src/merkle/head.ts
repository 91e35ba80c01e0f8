// §8.1 Tree heads and proof checks over byte hashes. A tree head always binds the size with the
// root: every check here takes {size, root}, never a root alone. Hash lengths are checked before
// any hashing, so a truncated or padded proof element is refused rather than hashed.
import { formatDigest, parseDigest, type Digest, type Json } from "@sbx/wire";
import { SandboxAttestError, type SandboxAttestErrorCode } from "../errors.ts";
import type { MerkleHasher } from "./hasher.ts";
import { verifySubtreeConsistency } from "./subtree.ts";
import { verifyConsistency, verifyInclusion, verifySubtreeInclusion, type Position } from "./verify.ts";

/** A tree head: the number of leaves and the root over exactly those leaves. */
export interface TreeHead<N = Uint8Array> {
  readonly size: Position;
  readonly root: N;
}

/** A subtree head: the leaf range [start, end) and its root (draft-ietf-plants-merkle-tree-certs §4.1). */
export interface SubtreeHead<N = Uint8Array> {
  readonly start: Position;
  readonly end: Position;
  readonly root: N;
}

/** The wire form of a BLAKE3 tree head (§8.3): `{"root": "blake3:…", "size": n}`. */
export interface TreeHeadJson {
  readonly size: number;
  readonly root: Digest;
}

function isPosition(x: unknown): x is Position {
  return (
    (typeof x === "number" && Number.isSafeInteger(x) && x >= 0) ||
    (typeof x === "bigint" && x >= 0n && x < 1n << 64n)
  );
}

/** assertTreeHead refuses (BadTreeHead) anything but {size, root} with a usable size and a byte root. */
export function assertTreeHead(head: unknown): asserts head is TreeHead {
  const h = head as Partial<TreeHead> | null;
  if (typeof h !== "object" || h === null || !isPosition(h.size) || !(h.root instanceof Uint8Array))
    throw new SandboxAttestError("BadTreeHead", "a tree head needs both a size and a root");
}

/**
 * parseTreeHead reads the wire form of a BLAKE3 tree head (§8.3). Refuses (BadTreeHead) a
 * missing or extra member, a size that is not a safe non-negative integer, or a malformed root.
 */
export function parseTreeHead(json: Json | undefined): TreeHead {
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new SandboxAttestError("BadTreeHead", "tree head is not an object");
  const keys = Object.keys(json).sort().join(",");
  const { size, root } = json;
  if (keys !== "root,size" || !isPosition(size) || typeof root !== "string")
    throw new SandboxAttestError("BadTreeHead", "a tree head is exactly {size, root}");
  try {
    return { size, root: parseDigest(root) };
  } catch (e) {
    throw new SandboxAttestError("BadTreeHead", "tree head root is not a digest", { cause: e });
  }
}

/** formatTreeHead writes a BLAKE3 tree head in its wire form (§8.3). RangeError for a size above 2^53. */
export function formatTreeHead(head: TreeHead): TreeHeadJson {
  const size = Number(head.size);
  if (!Number.isSafeInteger(size)) throw new RangeError("formatTreeHead: size is not a safe integer");
  return { size, root: formatDigest(head.root) };
}

function checkLengths(
  hasher: MerkleHasher,
  code: SandboxAttestErrorCode,
  nodes: readonly Uint8Array[],
): void {
  for (const n of nodes)
    if (n.length !== hasher.size)
      throw new SandboxAttestError(code, `hash of ${n.length} bytes, want ${hasher.size}`);
}

/**
 * verifyInclusionProof checks that `leafHash` is leaf `index` of the tree `head` (RFC 9162
 * §2.1.3.2). Throws BadTreeHead for a head without size or root, InclusionProofInvalid for a
 * leaf or proof hash of the wrong length, index ≥ size, a wrong-length proof or a root mismatch.
 */
export function verifyInclusionProof(
  hasher: MerkleHasher,
  head: TreeHead,
  index: Position,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
): void {
  assertTreeHead(head);
  checkLengths(hasher, "InclusionProofInvalid", [leafHash, ...proof]);
  verifyInclusion(hasher, index, head.size, leafHash, proof, head.root);
}

/**
 * verifyConsistencyProof checks that tree head `older` is a prefix of tree head `newer` (RFC 9162
 * §2.1.4.2). Throws BadTreeHead for a malformed head, ConsistencyProofInvalid otherwise.
 */
export function verifyConsistencyProof(
  hasher: MerkleHasher,
  older: TreeHead,
  newer: TreeHead,
  proof: readonly Uint8Array[],
): void {
  assertTreeHead(older);
  assertTreeHead(newer);
  checkLengths(hasher, "ConsistencyProofInvalid", proof);
  verifyConsistency(hasher, older.size, newer.size, older.root, newer.root, proof);
}

/** verifySubtreeInclusionProof checks leaf `index` inside a subtree head (draft §4.3); throws InclusionProofInvalid. */
export function verifySubtreeInclusionProof(
  hasher: MerkleHasher,
  sub: SubtreeHead,
  index: Position,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
): void {
  checkLengths(hasher, "InclusionProofInvalid", [leafHash, ...proof]);
  verifySubtreeInclusion(hasher, index, sub.start, sub.end, leafHash, proof, sub.root);
}

/** verifySubtreeConsistencyProof checks a subtree head against a tree head (draft §4.4.3); throws ConsistencyProofInvalid. */
export function verifySubtreeConsistencyProof(
  hasher: MerkleHasher,
  sub: SubtreeHead,
  head: TreeHead,
  proof: readonly Uint8Array[],
): void {
  assertTreeHead(head);
  checkLengths(hasher, "ConsistencyProofInvalid", proof);
  verifySubtreeConsistency(hasher, sub.start, sub.end, head.size, sub.root, head.root, proof);
}
