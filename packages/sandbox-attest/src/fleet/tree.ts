// §16.2 The fleet tree's node store. Every perfect subtree above the leaves is kept as a 40-byte
// record (record.ts) in one growable buffer per level; a leaf is recomputed from its item when
// asked, since the items are kept anyway. A build of n items thus makes no node objects, no
// per-node arrays and no BigInts, and holds 40·n bytes of nodes; nodes become FleetNode objects
// only when a root or a proof asks for them. Roots and proofs are the generic merkle StoredTree's.
import { SandboxAttestError } from "../errors.ts";
import { StoredTree } from "../merkle/tree.ts";
import type { FleetTreeOps } from "./node.ts";
import { addSums, nodeAt, RECORD } from "./record.ts";
import type { FleetItem, FleetNode } from "./types.ts";

const FIRST_CAPACITY = 512;

/** FleetTree is the (hash, sum) tree over a fleet's items in order (§16.2), grown by append. */
export class FleetTree extends StoredTree<FleetNode> {
  /** The items in order; leaf i is leaf(items[i]). */
  readonly items: FleetItem[] = [];
  readonly #ops: FleetTreeOps;
  // The last even leaf's record, then its right sibling's: the input of their parent.
  readonly #pair = new Uint8Array(2 * RECORD);
  // Level h ≥ 1: #counts[h] records of the nodes over 2^h leaves, in #levels[h].
  readonly #levels: Uint8Array[] = [];
  readonly #counts: number[] = [];
  // The total so far, u64be: every subtree's sum is at most this, so no combine can overflow.
  readonly #total = new Uint8Array(8);
  readonly #expected: number;

  /** A tree over `ops`; `expected` leaves, when known, size each level's buffer once. */
  constructor(ops: FleetTreeOps, expected = 0) {
    super(ops);
    this.#ops = ops;
    this.#expected = expected;
  }

  /** size is the number of leaves. */
  get size(): number {
    return this.items.length;
  }

  /**
   * append adds leaf(item) of a parsed item on the right and the perfect subtrees it completes.
   * Refuses, adding nothing, `EnergyOverflow` when the fleet's total would exceed 2^64 − 1 and
   * `BadFleetItem` for an item too long to hash.
   */
  append(item: FleetItem): void {
    const odd = this.items.length % 2;
    this.#ops.writeLeaf(item, this.#pair, odd * RECORD);
    try {
      addSums(this.#total, 0, this.#pair, odd * RECORD + 32, this.#total, 0);
    } catch (e) {
      throw new SandboxAttestError(
        "EnergyOverflow",
        `fleet energy would exceed 2^64 - 1 at item ${item.item}`,
        { cause: e },
      );
    }
    this.items.push(item);
    if (odd === 1) this.#carry();
  }

  /** #carry combines the pair of leaves, then each pair that completes, into the level above. */
  #carry(): void {
    let [src, at]: [Uint8Array, number] = [this.#pair, 0];
    for (let h = 1; ; h++) {
      const n = this.#counts[h] ?? 0;
      const level = this.#room(h, n + 1);
      this.#ops.writeNode(src, at, level, n * RECORD);
      this.#counts[h] = n + 1;
      if (n % 2 === 0) return;
      [src, at] = [level, (n - 1) * RECORD];
    }
  }

  /** #room returns level h's buffer with room for `count` records, doubling it when full. */
  #room(h: number, count: number): Uint8Array {
    const buf = this.#levels[h];
    if (buf !== undefined && buf.length >= count * RECORD) return buf;
    const first = Math.max(FIRST_CAPACITY, Math.ceil(this.#expected / 2 ** h));
    const grown = new Uint8Array(Math.max(count, (2 * (buf?.length ?? 0)) / RECORD, first) * RECORD);
    if (buf !== undefined) grown.set(buf);
    this.#levels[h] = grown;
    return grown;
  }

  protected override node(level: number, index: number): FleetNode {
    if (level === 0 && index >= 0 && index < this.items.length) return this.#ops.leaf(this.items[index]!);
    if (!Number.isSafeInteger(index) || index < 0 || index >= (this.#counts[level] ?? 0))
      throw new RangeError(`no node at level ${level}, index ${index}`);
    return nodeAt(this.#levels[level]!, index * RECORD);
  }
}
