// A literal, slow reference of the RFC 9162 recursions (§2.1.1 MTH, §2.1.3.1 PATH, §2.1.4.1
// PROOF/SUBPROOF) and of the subtree consistency proof of draft-ietf-plants-merkle-tree-certs
// §4.4.1, written as the documents state them: list slicing and recursion, nothing clever. The
// fast code in src/merkle is checked against these on random trees.
import type { MerkleHasher } from "../../src/merkle/index.ts";

/** k: the largest power of two smaller than n. */
function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k = k * 2;
  return k;
}

/** MTH(D[n]) */
export function refMTH(h: MerkleHasher, D: readonly Uint8Array[]): Uint8Array {
  const n = D.length;
  if (n === 0) return h.empty();
  if (n === 1) return h.leaf(D[0]!);
  const k = largestPowerOfTwoBelow(n);
  return h.combine(refMTH(h, D.slice(0, k)), refMTH(h, D.slice(k, n)));
}

/** PATH(m, D[n]) */
export function refPATH(h: MerkleHasher, m: number, D: readonly Uint8Array[]): Uint8Array[] {
  const n = D.length;
  if (n === 1) return [];
  const k = largestPowerOfTwoBelow(n);
  if (m < k) return [...refPATH(h, m, D.slice(0, k)), refMTH(h, D.slice(k, n))];
  return [...refPATH(h, m - k, D.slice(k, n)), refMTH(h, D.slice(0, k))];
}

/** SUBPROOF(m, D[n], b) */
export function refSUBPROOF(h: MerkleHasher, m: number, D: readonly Uint8Array[], b: boolean): Uint8Array[] {
  const n = D.length;
  if (m === n) return b ? [] : [refMTH(h, D)];
  const k = largestPowerOfTwoBelow(n);
  if (m <= k) return [...refSUBPROOF(h, m, D.slice(0, k), b), refMTH(h, D.slice(k, n))];
  return [...refSUBPROOF(h, m - k, D.slice(k, n), false), refMTH(h, D.slice(0, k))];
}

/** PROOF(m, D[n]) */
export function refPROOF(h: MerkleHasher, m: number, D: readonly Uint8Array[]): Uint8Array[] {
  return refSUBPROOF(h, m, D, true);
}

/** SUBTREE_SUBPROOF(start, end, D[n], b): the subtree [start, end) lies in D. */
export function refSUBTREE_SUBPROOF(
  h: MerkleHasher,
  start: number,
  end: number,
  D: readonly Uint8Array[],
  b: boolean,
): Uint8Array[] {
  const n = D.length;
  if (start === 0 && end === n) return b ? [] : [refMTH(h, D)];
  const k = largestPowerOfTwoBelow(n);
  if (end <= k) return [...refSUBTREE_SUBPROOF(h, start, end, D.slice(0, k), b), refMTH(h, D.slice(k, n))];
  if (start >= k)
    return [...refSUBTREE_SUBPROOF(h, start - k, end - k, D.slice(k, n), b), refMTH(h, D.slice(0, k))];
  return [...refSUBTREE_SUBPROOF(h, 0, end - k, D.slice(k, n), false), refMTH(h, D.slice(0, k))];
}
