// §8.1 The generic tree core: roots and proofs for any node type N through TreeOps<N>. Iterative
// throughout (no recursion over the tree), so a million leaves cost one pass and O(log n) stack.
import type { TreeOps } from "./hasher.ts";
import {
  consistencyPath,
  inclusionPath,
  isValidSubtree,
  perfectRanges,
  subtreeConsistencyPath,
  type LeafRange,
} from "./shape.ts";

/**
 * CompactRange holds the perfect subtrees covering the leaves appended so far (at most one per
 * size, largest first), so appending is amortised O(1) combines and the root is O(log n).
 */
export class CompactRange<N> {
  readonly #ops: TreeOps<N>;
  readonly #stack: N[] = [];
  #size = 0;

  constructor(ops: TreeOps<N>) {
    this.#ops = ops;
  }

  /** size is the number of leaves appended. */
  get size(): number {
    return this.#size;
  }

  /** append adds one leaf node on the right. */
  append(leaf: N): void {
    let node = leaf;
    // Each trailing one bit of the old size is a perfect subtree of equal size to merge with.
    for (let c = this.#size; c % 2 === 1; c = Math.floor(c / 2))
      node = this.#ops.combine(this.#stack.pop() as N, node);
    this.#stack.push(node);
    this.#size++;
  }

  /** root returns MTH over every leaf appended: the right fold of the perfect subtrees. */
  root(): N {
    return foldRight(this.#ops, this.#stack);
  }
}

/** foldRight combines perfect subtrees given left to right into the root they span. */
function foldRight<N>(ops: TreeOps<N>, nodes: readonly N[]): N {
  if (nodes.length === 0) return ops.empty();
  let r = nodes[nodes.length - 1] as N;
  for (let i = nodes.length - 2; i >= 0; i--) r = ops.combine(nodes[i] as N, r);
  return r;
}

/** rootOf returns MTH(D) over leaf nodes (RFC 9162 §2.1.1), in O(n) combines and O(log n) memory. */
export function rootOf<N>(ops: TreeOps<N>, leaves: Iterable<N>): N {
  const r = new CompactRange(ops);
  for (const leaf of leaves) r.append(leaf);
  return r.root();
}

/**
 * StoredTree answers roots of any earlier size and proofs in O(log n) combines for a tree that
 * keeps every perfect subtree of its leaves: `node(h, i)` is the root over leaves [i·2^h, (i+1)·2^h).
 * How the nodes are stored is the subclass's: MerkleTree keeps node objects in arrays; the §16
 * fleet tree keeps fixed-size records in flat buffers. The proof code is this one.
 */
export abstract class StoredTree<N> {
  protected readonly ops: TreeOps<N>;

  constructor(ops: TreeOps<N>) {
    this.ops = ops;
  }

  /** size is the number of leaves. */
  abstract get size(): number;

  /** node returns the perfect subtree at `level`, `index`; RangeError where there is none. */
  protected abstract node(level: number, index: number): N;

  /** leaf returns leaf node `index`; RangeError outside the tree. */
  leaf(index: number): N {
    return this.node(0, index);
  }

  /** root returns MTH of the first `size` leaves (default: all); RangeError above the size. */
  root(size: number = this.size): N {
    if (!Number.isSafeInteger(size) || size < 0 || size > this.size)
      throw new RangeError(`root: size ${size} outside 0..${this.size}`);
    return this.rangeRoot({ begin: 0, end: size });
  }

  /** rangeRoot returns MTH(D[begin:end]) for a valid subtree range within the tree. */
  rangeRoot(r: LeafRange): N {
    if (!isValidSubtree(r.begin, r.end) || r.end > this.size)
      throw new RangeError(`rangeRoot: [${r.begin}, ${r.end}) is not a subtree of ${this.size} leaves`);
    const nodes = perfectRanges(r.begin, r.end).map((p) => {
      const h = Math.round(Math.log2(p.end - p.begin));
      return this.node(h, p.begin / 2 ** h);
    });
    return foldRight(this.ops, nodes);
  }

  /** inclusionProof returns PATH(index, D[0:size]) (RFC 9162 §2.1.3.1). RangeError unless index < size ≤ this.size. */
  inclusionProof(index: number, size: number = this.size): N[] {
    this.#checkSize(size);
    return inclusionPath(index, size).map((r) => this.rangeRoot(r));
  }

  /** consistencyProof returns PROOF(size1, D[0:size2]) (RFC 9162 §2.1.4.1). RangeError unless 0 < size1 ≤ size2 ≤ this.size. */
  consistencyProof(size1: number, size2: number = this.size): N[] {
    this.#checkSize(size2);
    return consistencyPath(size1, size2).map((r) => this.rangeRoot(r));
  }

  /** subtreeInclusionProof proves leaf `index` inside the valid subtree [start, end) (draft-ietf-plants-merkle-tree-certs §4.3). */
  subtreeInclusionProof(index: number, start: number, end: number): N[] {
    if (!isValidSubtree(start, end) || index < start || index >= end)
      throw new RangeError(`subtreeInclusionProof: ${index} not in valid subtree [${start}, ${end})`);
    this.#checkSize(end);
    return inclusionPath(index - start, end - start).map((r) =>
      this.rangeRoot({ begin: r.begin + start, end: r.end + start }),
    );
  }

  /** subtreeConsistencyProof proves the subtree [start, end) is part of the first `size` leaves (draft §4.4.1). */
  subtreeConsistencyProof(start: number, end: number, size: number = this.size): N[] {
    this.#checkSize(size);
    return subtreeConsistencyPath(start, end, size).map((r) => this.rangeRoot(r));
  }

  #checkSize(size: number): void {
    if (!Number.isSafeInteger(size) || size < 0 || size > this.size)
      throw new RangeError(`size ${size} outside 0..${this.size}`);
  }
}

/**
 * MerkleTree keeps every perfect subtree of its leaves as node objects (level h holds the nodes
 * over 2^h leaves), so it answers roots of any earlier size and proofs (StoredTree). It grows by
 * append.
 */
export class MerkleTree<N> extends StoredTree<N> {
  readonly #levels: N[][] = [[]];

  constructor(ops: TreeOps<N>, leaves: Iterable<N> = []) {
    super(ops);
    for (const leaf of leaves) this.append(leaf);
  }

  /** size is the number of leaves. */
  get size(): number {
    return (this.#levels[0] as N[]).length;
  }

  /** append adds one leaf node on the right and the perfect subtrees it completes. */
  append(leaf: N): void {
    let node = leaf;
    for (let h = 0; ; h++) {
      const level = (this.#levels[h] ??= []);
      level.push(node);
      if (level.length % 2 === 1) return;
      node = this.ops.combine(level[level.length - 2] as N, node);
    }
  }

  protected override node(level: number, index: number): N {
    const n = this.#levels[level]?.[index];
    if (n === undefined) throw new RangeError(`no node at level ${level}, index ${index}`);
    return n;
  }
}
