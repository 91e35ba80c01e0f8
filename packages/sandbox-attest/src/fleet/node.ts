// §16.2 The fleet tree's nodes: RFC 9162 shape, each node a (hash, energy sum) pair.
//   leaf(item)  = ( H(0x00 ‖ JCS(item)),                                   energy_uj(item) )
//   node(L, R)  = ( H(0x01 ‖ L.hash ‖ u64be(L.sum) ‖ R.hash ‖ u64be(R.sum)),  L.sum + R.sum )
//   empty       = ( H(""), 0 )
// Both child sums enter the parent's hash, so the root hash fixes the total, and a membership proof
// fixes both the item's place and that its energy is counted in the total.
import {
  blake3,
  bytesEqual,
  formatAmount,
  formatDigest,
  parseAmount,
  parseDigest,
  type Digest,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { TreeOps } from "../merkle/hasher.ts";
import { itemText } from "./item.ts";
import type { FleetItem, FleetNode, WireNode } from "./types.ts";

/** A plain hash function returning a fresh 32-byte digest. */
export type FleetHash = (data: Uint8Array) => Uint8Array;

const U64_MAX = (1n << 64n) - 1n;
const ITEM_MAX = 512;

/** FleetTreeOps is TreeOps over fleet nodes plus the leaf function, for one hash. */
export interface FleetTreeOps extends TreeOps<FleetNode> {
  /** leaf returns the leaf node of a parsed item. */
  leaf(item: FleetItem): FleetNode;
}

/** fleetOps builds the §16.2 node algebra over `hash` (BLAKE3 on the wire; any 32-byte hash for benches). */
export function fleetOps(hash: FleetHash): FleetTreeOps {
  const node = new Uint8Array(81);
  const view = new DataView(node.buffer);
  node[0] = 0x01;
  const leafBuf = new Uint8Array(1 + ITEM_MAX);
  const enc = new TextEncoder();
  const emptyHash = hash(new Uint8Array(0));
  return {
    combine(l, r) {
      const sum = l.sum + r.sum;
      if (sum > U64_MAX)
        throw new SandboxAttestError("EnergyOverflow", `subtree energy ${sum} exceeds 2^64 - 1`);
      node.set(l.hash, 1);
      view.setBigUint64(33, l.sum);
      node.set(r.hash, 41);
      view.setBigUint64(73, r.sum);
      return { hash: hash(node), sum };
    },
    empty: () => ({ hash: emptyHash.slice(), sum: 0n }),
    equal: (a, b) => a.sum === b.sum && bytesEqual(a.hash, b.hash),
    leaf(item) {
      const text = itemText(item);
      const { read, written } = enc.encodeInto(text, leafBuf.subarray(1));
      if (read !== text.length)
        throw new SandboxAttestError("BadFleetItem", `item ${item.item} is longer than ${ITEM_MAX} bytes`);
      return { hash: hash(leafBuf.subarray(0, 1 + written)), sum: parseAmount(item.energy_uj) };
    },
  };
}

/** The wire fleet algebra (§16.2): BLAKE3-256. */
export const fleetBlake3: FleetTreeOps = fleetOps(blake3);

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
