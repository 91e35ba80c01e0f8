// §8.1 Proof verification for any node type N. Positions are 64-bit (bigint inside), so proofs
// about trees larger than 2^53 leaves, and the published probes at 2^64 − 1, are checked exactly.
// Every failure throws SandboxAttestError InclusionProofInvalid or ConsistencyProofInvalid.
import { SandboxAttestError } from "../errors.ts";
import type { TreeOps } from "./hasher.ts";

/** A leaf position or tree size: a safe non-negative integer, or a bigint below 2^64. */
export type Position = number | bigint;

const U64 = 1n << 64n;

/** toU64 converts a position to bigint; RangeError for negatives, fractions or 2^64 and above. */
export function toU64(name: string, x: Position): bigint {
  if (typeof x === "number" && !Number.isSafeInteger(x))
    throw new RangeError(`${name} must be an integer, got ${x}`);
  const v = BigInt(x);
  if (v < 0n || v >= U64) throw new RangeError(`${name} must be in 0..2^64-1, got ${v}`);
  return v;
}

function failInclusion(why: string): never {
  throw new SandboxAttestError("InclusionProofInvalid", why);
}
function failConsistency(why: string): never {
  throw new SandboxAttestError("ConsistencyProofInvalid", why);
}
const odd = (x: bigint): boolean => (x & 1n) === 1n;

/**
 * rootFromInclusion runs RFC 9162 §2.1.3.2 and returns the root the proof implies for leaf node
 * `leaf` at `index` in a tree of `size` leaves. Refuses (InclusionProofInvalid) index ≥ size and a
 * proof of the wrong length.
 */
export function rootFromInclusion<N>(
  ops: TreeOps<N>,
  index: Position,
  size: Position,
  leaf: N,
  proof: readonly N[],
): N {
  let fn = toU64("index", index);
  let sn = toU64("size", size) - 1n;
  if (fn > sn) failInclusion(`index ${fn} is not below size ${sn + 1n}`);
  let r = leaf;
  for (const p of proof) {
    if (sn === 0n) failInclusion("proof is longer than the path");
    if (odd(fn) || fn === sn) {
      r = ops.combine(p, r);
      while (!odd(fn) && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else r = ops.combine(r, p);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  if (sn !== 0n) failInclusion("proof is shorter than the path");
  return r;
}

/** verifyInclusion checks an inclusion proof against `root` (RFC 9162 §2.1.3.2); throws InclusionProofInvalid. */
export function verifyInclusion<N>(
  ops: TreeOps<N>,
  index: Position,
  size: Position,
  leaf: N,
  proof: readonly N[],
  root: N,
): void {
  if (!ops.equal(rootFromInclusion(ops, index, size, leaf, proof), root))
    failInclusion("calculated root differs from the tree head's");
}

/**
 * verifyConsistency runs RFC 9162 §2.1.4.2: the tree of size1 with root1 is a prefix of the tree
 * of size2 with root2. Refuses (ConsistencyProofInvalid) size1 = 0 (no proof is defined from the
 * empty tree), size1 > size2, a non-empty proof for equal sizes, and any mismatch.
 */
export function verifyConsistency<N>(
  ops: TreeOps<N>,
  size1: Position,
  size2: Position,
  root1: N,
  root2: N,
  proof: readonly N[],
): void {
  const m = toU64("size1", size1);
  const n = toU64("size2", size2);
  if (m === 0n) failConsistency("no consistency proof is defined from the empty tree");
  if (m > n) failConsistency(`size1 ${m} exceeds size2 ${n}`);
  if (m === n) {
    if (proof.length > 0) failConsistency("equal sizes need an empty proof");
    if (!ops.equal(root1, root2)) failConsistency("equal sizes with different roots");
    return;
  }
  if (proof.length === 0) failConsistency("empty proof for different sizes");
  const path = (m & (m - 1n)) === 0n ? [root1, ...proof] : proof;
  let [fn, sn] = [m - 1n, n - 1n];
  while (odd(fn)) [fn, sn] = [fn >> 1n, sn >> 1n];
  let fr = path[0] as N;
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0n) failConsistency("proof is longer than needed");
    if (odd(fn) || fn === sn) {
      [fr, sr] = [ops.combine(c, fr), ops.combine(c, sr)];
      while (!odd(fn) && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else sr = ops.combine(sr, c);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  if (sn !== 0n) failConsistency("proof is shorter than needed");
  if (!ops.equal(fr, root1)) failConsistency("proof does not reproduce root1");
  if (!ops.equal(sr, root2)) failConsistency("proof does not reproduce root2");
}

/** isValidSubtreeU64 is isValidSubtree over 64-bit positions (draft-ietf-plants-merkle-tree-certs §4.1). */
export function isValidSubtreeU64(start: bigint, end: bigint): boolean {
  if (start > end) return false;
  if (start === 0n || start === end) return true;
  let ceil = 1n;
  while (ceil < end - start) ceil <<= 1n;
  return start % ceil === 0n;
}

/**
 * verifySubtreeInclusion checks that `leaf` is at `index` inside the valid subtree [start, end)
 * whose root is `root` (draft-ietf-plants-merkle-tree-certs §4.3): the RFC 9162 inclusion check
 * at index − start in a tree of end − start leaves. Throws InclusionProofInvalid.
 */
export function verifySubtreeInclusion<N>(
  ops: TreeOps<N>,
  index: Position,
  start: Position,
  end: Position,
  leaf: N,
  proof: readonly N[],
  root: N,
): void {
  const [i, s, e] = [toU64("index", index), toU64("start", start), toU64("end", end)];
  if (!isValidSubtreeU64(s, e) || s === e) failInclusion(`[${s}, ${e}) is not a non-empty valid subtree`);
  if (i < s || i >= e) failInclusion(`index ${i} outside [${s}, ${e})`);
  verifyInclusion(ops, i - s, e - s, leaf, proof, root);
}
