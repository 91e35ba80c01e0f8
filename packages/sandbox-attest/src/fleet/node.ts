// §16.2 The fleet tree's nodes: RFC 9162 shape, each node a (hash, energy sum) pair.
//   leaf(item)  = ( H(0x00 ‖ JCS(item)),                                   energy_uj(item) )
//   node(L, R)  = ( H(0x01 ‖ L.hash ‖ u64be(L.sum) ‖ R.hash ‖ u64be(R.sum)),  L.sum + R.sum )
//   empty       = ( H(""), 0 )
// Both child sums enter the parent's hash, so the root hash fixes the total, and a membership proof
// fixes both the item's place and that its energy is counted in the total.
import {
  bytesEqual,
  createBlake3Chunk,
  formatAmount,
  formatDigest,
  parseAmount,
  parseDigest,
  type Digest,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { TreeOps } from "../merkle/hasher.ts";
import { itemText } from "./item.ts";
import { addSums, nodeAt, putAmount, putNode, RECORD } from "./record.ts";
import type { FleetItem, FleetNode, WireNode } from "./types.ts";

/** A plain hash function returning a fresh 32-byte digest. */
export type FleetHash = (data: Uint8Array) => Uint8Array;

/**
 * A 32-byte hash over its own input buffer (as @sbx/wire's createBlake3Chunk): the caller writes
 * the input at input[0, len), then digestInto writes the hash at out[outOff, outOff + 32).
 */
export interface FleetHasher {
  readonly input: Uint8Array;
  digestInto(len: number, out: Uint8Array, outOff: number): void;
}

const ITEM_MAX = 512;

/**
 * FleetTreeOps is TreeOps over fleet nodes plus the leaf function, for one hash, each in two forms:
 * on node objects (proofs, verification) and on 40-byte records (record.ts) in flat buffers (the
 * build). Both forms hash the same bytes through the same code.
 */
export interface FleetTreeOps extends TreeOps<FleetNode> {
  /** leaf returns the leaf node of a parsed item. */
  leaf(item: FleetItem): FleetNode;
  /** writeLeaf writes leaf(item) of a parsed item as a record at out[at]; refuses `BadFleetItem` above 512 bytes. */
  writeLeaf(item: FleetItem, out: Uint8Array, at: number): void;
  /** writeNode writes node(L, R) of the adjacent records src[at, at + 80) at out[outAt]; refuses `EnergyOverflow`. */
  writeNode(src: Uint8Array, at: number, out: Uint8Array, outAt: number): void;
}

/** fleetOps builds the §16.2 node algebra over a plain `hash` (any 32-byte hash, for benches). */
export function fleetOps(hash: FleetHash): FleetTreeOps {
  const input = new Uint8Array(1 + ITEM_MAX);
  return fleetOpsWith({
    input,
    digestInto: (len, out, outOff) => {
      out.set(hash(input.subarray(0, len)), outOff);
    },
  });
}

/**
 * fleetOpsWith builds the §16.2 node algebra over a hasher whose input buffer holds at least
 * 1 + 512 bytes: the leaf's text is encoded into it in place. RangeError for a smaller buffer.
 */
export function fleetOpsWith(h: FleetHasher): FleetTreeOps {
  return new FleetAlgebra(h);
}

/** FleetAlgebra is FleetTreeOps over one hasher; the object forms go through the record forms. */
class FleetAlgebra implements FleetTreeOps {
  readonly #h: FleetHasher;
  readonly #body: Uint8Array; // the hasher's input after the prefix byte
  readonly #enc = new TextEncoder();
  readonly #pair = new Uint8Array(3 * RECORD); // two child records, then the parent's
  readonly #empty = new Uint8Array(32);

  constructor(h: FleetHasher) {
    if (h.input.length < 1 + ITEM_MAX) throw new RangeError(`fleetOpsWith: input of ${h.input.length} bytes`);
    this.#h = h;
    this.#body = h.input.subarray(1, 1 + ITEM_MAX);
    h.digestInto(0, this.#empty, 0);
  }

  writeNode(src: Uint8Array, at: number, out: Uint8Array, outAt: number): void {
    addSums(src, at + 32, src, at + RECORD + 32, out, outAt + 32);
    const { input } = this.#h;
    input[0] = 0x01;
    input.set(src.subarray(at, at + 2 * RECORD), 1);
    this.#h.digestInto(1 + 2 * RECORD, out, outAt);
  }

  writeLeaf(item: FleetItem, out: Uint8Array, at: number): void {
    const text = itemText(item);
    const { read, written } = this.#enc.encodeInto(text, this.#body);
    if (read !== text.length)
      throw new SandboxAttestError("BadFleetItem", `item ${item.item} is longer than ${ITEM_MAX} bytes`);
    putAmount(out, at + 32, item.energy_uj);
    this.#h.input[0] = 0x00;
    this.#h.digestInto(1 + written, out, at);
  }

  combine(l: FleetNode, r: FleetNode): FleetNode {
    putNode(this.#pair, 0, l);
    putNode(this.#pair, RECORD, r);
    this.writeNode(this.#pair, 0, this.#pair, 2 * RECORD);
    return nodeAt(this.#pair, 2 * RECORD);
  }

  leaf(item: FleetItem): FleetNode {
    this.writeLeaf(item, this.#pair, 0);
    return nodeAt(this.#pair, 0);
  }

  empty(): FleetNode {
    return { hash: this.#empty.slice(), sum: 0n };
  }

  equal(a: FleetNode, b: FleetNode): boolean {
    return a.sum === b.sum && bytesEqual(a.hash, b.hash);
  }
}

/** The wire fleet algebra (§16.2): BLAKE3-256, hashed in place by @sbx/wire's one-chunk hasher. */
export const fleetBlake3: FleetTreeOps = fleetOpsWith(createBlake3Chunk());

/** toWireNode writes a node as `{hash, uj}` (§16.4). */
export function toWireNode(n: FleetNode): WireNode {
  return { hash: formatDigest(n.hash), uj: formatAmount(n.sum) };
}

/** fromWireNode reads `{hash, uj}`; refuses `BadFleetReceipt` for any other shape. */
export function fromWireNode(w: unknown): FleetNode {
  const o = w as Record<string, unknown> | null;
  if (
    typeof o !== "object" ||
    o === null ||
    Array.isArray(o) ||
    Object.keys(o).sort().join(",") !== "hash,uj"
  )
    throw new SandboxAttestError("BadFleetReceipt", "a proof node is {hash, uj}");
  try {
    return { hash: parseDigest(o.hash), sum: parseAmount(o.uj) };
  } catch (e) {
    throw new SandboxAttestError("BadFleetReceipt", "a proof node has a digest hash and an amount uj", {
      cause: e,
    });
  }
}

/** rootDigest writes a root hash as a digest (§16.3). */
export function rootDigest(n: FleetNode): Digest {
  return formatDigest(n.hash);
}
