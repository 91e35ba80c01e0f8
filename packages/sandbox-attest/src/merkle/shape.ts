// §8.1 The RFC 9162 tree shape as index arithmetic, independent of any hash or node type: which
// leaf ranges a proof's elements commit to. Every element of an inclusion or consistency proof is
// MTH(D[begin:end]) for one range listed here, so a tree of any node type can fill a proof in.

/** A half-open range of leaf positions [begin, end). */
export interface LeafRange {
  readonly begin: number;
  readonly end: number;
}

function checkCount(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0)
    throw new RangeError(`${name} must be a non-negative safe integer, got ${n}`);
}

/** splitPoint returns k, the largest power of two smaller than n (RFC 9162 §2.1.1); n ≥ 2. */
export function splitPoint(n: number): number {
  if (!Number.isSafeInteger(n) || n < 2)
    throw new RangeError(`splitPoint: n must be an integer ≥ 2, got ${n}`);
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** isPerfect reports whether [begin, end) is one perfect subtree: a power-of-two size, aligned. */
export function isPerfect(r: LeafRange): boolean {
  const w = r.end - r.begin;
  return w > 0 && (w & (w - 1)) === 0 && r.begin % w === 0;
}

/**
 * isValidSubtree reports whether [start, end) is a node of some RFC 9162 tree: start ≤ end and
 * start is a multiple of the smallest power of two ≥ end − start
 * (draft-ietf-plants-merkle-tree-certs §4.1). Every range a proof names is one.
 */
export function isValidSubtree(start: number, end: number): boolean {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || start > end) return false;
  if (start === 0 || start === end) return true;
  let ceil = 1;
  while (ceil < end - start) ceil *= 2;
  return start % ceil === 0;
}

/**
 * perfectRanges splits a valid subtree [begin, end) into its perfect subtrees, left to right and
 * largest first (its compact range). MTH(D[begin:end]) is their right fold under combine.
 */
export function perfectRanges(begin: number, end: number): LeafRange[] {
  if (!isValidSubtree(begin, end))
    throw new RangeError(`perfectRanges: [${begin}, ${end}) is not a valid subtree`);
  const out: LeafRange[] = [];
  let at = begin;
  while (at < end) {
    let w = 1;
    while (w * 2 <= end - at) w *= 2;
    out.push({ begin: at, end: at + w });
    at += w;
  }
  return out;
}

/**
 * inclusionPath returns the ranges of PATH(index, D[0:size]) (RFC 9162 §2.1.3.1), in proof order
 * (nearest the leaf first). Throws RangeError unless 0 ≤ index < size.
 */
export function inclusionPath(index: number, size: number): LeafRange[] {
  checkCount("index", index);
  checkCount("size", size);
  if (index >= size) throw new RangeError(`inclusionPath: index ${index} is not below size ${size}`);
  const out: LeafRange[] = [];
  let lo = 0;
  let hi = size;
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      out.push({ begin: lo + k, end: hi });
      hi = lo + k;
    } else {
      out.push({ begin: lo, end: lo + k });
      lo += k;
    }
  }
  return out.reverse();
}

/**
 * consistencyPath returns the ranges of PROOF(size1, D[0:size2]) (RFC 9162 §2.1.4.1), in proof
 * order. Empty when size1 = size2. Throws RangeError unless 0 < size1 ≤ size2.
 */
export function consistencyPath(size1: number, size2: number): LeafRange[] {
  checkCount("size1", size1);
  checkCount("size2", size2);
  if (size1 === 0 || size1 > size2)
    throw new RangeError(`consistencyPath: need 0 < size1 ≤ size2, got ${size1}, ${size2}`);
  return subtreeConsistencyPath(0, size1, size2);
}

/**
 * subtreeConsistencyPath returns the ranges of the subtree consistency proof of the valid subtree
 * [start, end) in the tree of `size` leaves (draft-ietf-plants-merkle-tree-certs §4.4.1; with
 * start = 0 it is RFC 9162 PROOF(end, D[0:size])), in proof order; empty for an empty subtree.
 * Throws RangeError unless [start, end) is a valid subtree and end ≤ size.
 */
export function subtreeConsistencyPath(start: number, end: number, size: number): LeafRange[] {
  checkCount("size", size);
  if (!isValidSubtree(start, end) || end > size)
    throw new RangeError(`subtreeConsistencyPath: [${start}, ${end}) is not a valid subtree of ${size}`);
  if (start === end) return [];
  const out: LeafRange[] = [];
  const e = end;
  let [s, lo, hi, known] = [start, 0, size, true];
  while (!(s === lo && e === hi)) {
    const k = lo + splitPoint(hi - lo);
    if (e <= k) {
      out.push({ begin: k, end: hi });
      hi = k;
    } else if (s >= k) {
      out.push({ begin: lo, end: k });
      lo = k;
    } else {
      // The subtree straddles k, so it starts at lo: D[lo:k] is in both trees.
      out.push({ begin: lo, end: k });
      [s, lo, known] = [k, k, false];
    }
  }
  if (!known) out.push({ begin: lo, end: hi });
  return out.reverse();
}
