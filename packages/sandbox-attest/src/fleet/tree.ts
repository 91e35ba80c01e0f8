// §16.2 The fleet tree's node store. Every perfect subtree of 8 leaves or more is kept as a 40-byte
// record (record.ts) in one growable buffer per level; smaller ones are recomputed from the items
// when a root or proof asks for them (at most 7 leaf hashes and 4 combines a proof), since the
// items are kept anyway. A build of n items thus makes no node objects, no per-node arrays and no
// BigInts, and holds 10·n bytes of nodes, whose allocation (counted by V8 as external memory)
// otherwise brings on full collections of the whole heap; nodes become FleetNode objects only when
// asked for. Roots and proofs are the generic merkle StoredTree's.
import { SandboxAttestError } from "../errors.ts";
import { StoredTree, rootOf } from "../merkle/tree.ts";
import type { FleetTreeOps } from "./node.ts";
import { addSums, nodeAt, RECORD } from "./record.ts";
import type { FleetItem, FleetNode } from "./types.ts";

const FIRST_CAPACITY = 512;
/** The lowest level kept: its nodes span 2^KEPT_FROM leaves. */
const KEPT_FROM = 3;

/** FleetTree is the (hash, sum) tree over a fleet's items in order (§16.2), grown by append. */
export class FleetTree extends StoredTree<FleetNode> {
  /** The items in order; leaf i is leaf(items[i]). */
  readonly items: FleetItem[] = [];
  readonly #ops: FleetTreeOps;
  // Levels below KEPT_FROM: the last left child's record, then its right sibling's.
  readonly #pending: Uint8Array[] = Array.from({ length: KEPT_FROM }, () => new Uint8Array(2 * RECORD));
  // Levels h ≥ KEPT_FROM: #counts[h] records of the nodes over 2^h leaves, in #levels[h].
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
    const at = (this.items.length % 2) * RECORD;
    const leaves = this.#pending[0]!;
    this.#ops.writeLeaf(item, leaves, at);
    try {
      addSums(this.#total, 0, leaves, at + 32, this.#total, 0);
    } catch (e) {
      throw new SandboxAttestError(
        "EnergyOverflow",
        `fleet energy would exceed 2^64 - 1 at item ${item.item}`,
        {
          cause: e,
        },
      );
    }
    this.items.push(item);
    if (at !== 0) this.#carry();
  }

  /** #carry combines the pair of leaves just completed, then each pair that completes above it. */
  #carry(): void {
    let src = this.#pending[0]!;
    let at = 0;
    for (let h = 1; ; h++) {
      const n = this.#counts[h] ?? 0;
      const kept = h >= KEPT_FROM;
      const dst = kept ? this.#room(h, n + 1) : this.#pending[h]!;
      const dstAt = (kept ? n : n % 2) * RECORD;
      this.#ops.writeNode(src, at, dst, dstAt);
      this.#counts[h] = n + 1;
      if (n % 2 === 0) return;
      src = dst;
      at = dstAt - RECORD;
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
    const w = 2 ** level;
    if (
      level < KEPT_FROM &&
      Number.isSafeInteger(index) &&
      index >= 0 &&
      (index + 1) * w <= this.items.length
    )
      return rootOf(
        this.#ops,
        this.items.slice(index * w, (index + 1) * w).map((it) => this.#ops.leaf(it)),
      );
    if (!Number.isSafeInteger(index) || index < 0 || index >= (this.#counts[level] ?? 0))
      throw new RangeError(`no node at level ${level}, index ${index}`);
    return nodeAt(this.#levels[level]!, index * RECORD);
  }
}
