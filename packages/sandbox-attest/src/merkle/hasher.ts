// §8.1 The hash a Merkle tree is built with enters through one small interface, so the tree code
// is written once: BLAKE3 on the wire (§2.3), SHA-256 for the published RFC 6962 vectors.
//
// SHA-256 comes from @noble/hashes (audited, pure JS, runs in a browser; already pinned by
// @sbx/wire). A native SHA-256, e.g. node:crypto's, can be injected through hasherFrom where speed
// matters; bench/merkle.bench.ts does exactly that for its anchor.
import { sha256 } from "@noble/hashes/sha2.js";
import { blake3, bytesEqual } from "@sbx/wire";

/**
 * TreeOps is what the generic tree core needs to know about a node type N: how two adjacent
 * subtrees combine into their parent, the root of the empty tree, and node equality. Byte hashes
 * are one node type; the §16 fleet tree's (hash, energy-sum) pairs are another.
 */
export interface TreeOps<N> {
  /** combine returns the parent of two adjacent subtrees, left then right (RFC 9162 §2.1.1). */
  combine(left: N, right: N): N;
  /** empty returns the root of the tree with no leaves, MTH({}). */
  empty(): N;
  /** equal reports whether two nodes are the same. */
  equal(a: N, b: N): boolean;
}

/** A byte-hash tree: leaf = H(0x00 ‖ data), node = H(0x01 ‖ left ‖ right), empty = H(""). */
export interface MerkleHasher extends TreeOps<Uint8Array> {
  /** The hash's name, e.g. "blake3" or "sha256". */
  readonly name: string;
  /** The length in bytes of every hash this hasher returns. */
  readonly size: number;
  /** leaf returns the leaf hash of `data`, H(0x00 ‖ data). */
  leaf(data: Uint8Array): Uint8Array;
}

/** A plain hash function: bytes in, a fresh digest out. */
export type HashFunction = (data: Uint8Array) => Uint8Array;

/**
 * hasherFrom builds the RFC 9162 §2.1.1 tree hasher over a plain hash function of `size`-byte
 * output (§8.1). The function must return a fresh array on each call.
 */
export function hasherFrom(name: string, hash: HashFunction, size = 32): MerkleHasher {
  const node = new Uint8Array(1 + 2 * size);
  node[0] = 0x01;
  const emptyRoot = hash(new Uint8Array(0));
  return {
    name,
    size,
    leaf(data) {
      const b = new Uint8Array(1 + data.length);
      b.set(data, 1);
      return hash(b);
    },
    combine(left, right) {
      if (left.length !== size || right.length !== size) return hash(Uint8Array.of(0x01, ...left, ...right));
      node.set(left, 1);
      node.set(right, 1 + size);
      return hash(node);
    },
    empty: () => emptyRoot.slice(),
    equal: bytesEqual,
  };
}

/** The wire hasher (§8.1): BLAKE3-256 through @sbx/wire. */
export const blake3Hasher: MerkleHasher = hasherFrom("blake3", blake3);

/** SHA-256 (@noble/hashes), for the published RFC 6962 / RFC 9162 vectors (§8.1). */
export const sha256Hasher: MerkleHasher = hasherFrom("sha256", (d) => sha256(d));
