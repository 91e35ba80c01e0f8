// A literal, slow reference of the §16.2 fleet tree: the RFC 9162 recursions MTH and PATH written
// out as the RFC states them, over (hash, sum) pairs, with the leaf built by the general JCS encoder.
import { blake3, canonicalBytes, concatBytes, parseAmount } from "@sbx/wire";
import type { FleetItem } from "@sbx/sandbox-attest/fleet";

/** A reference node. */
export interface RefNode {
  readonly hash: Uint8Array;
  readonly sum: bigint;
}

function u64be(x: bigint): Uint8Array {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, x);
  return b;
}

function k(n: number): number {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}

/** refNode is node(L, R) of §16.2. */
export function refNode(l: RefNode, r: RefNode): RefNode {
  return {
    hash: blake3(concatBytes(Uint8Array.of(1), l.hash, u64be(l.sum), r.hash, u64be(r.sum))),
    sum: l.sum + r.sum,
  };
}

/** refLeaf is leaf(item) of §16.2. */
export function refLeaf(item: FleetItem): RefNode {
  return {
    hash: blake3(concatBytes(Uint8Array.of(0), canonicalBytes(item))),
    sum: parseAmount(item.energy_uj),
  };
}

/** refMTH is MTH(D[n]) over items (RFC 9162 §2.1.1). */
export function refMTH(d: readonly FleetItem[]): RefNode {
  if (d.length === 0) return { hash: blake3(new Uint8Array(0)), sum: 0n };
  if (d.length === 1) return refLeaf(d[0] as FleetItem);
  const s = k(d.length);
  return refNode(refMTH(d.slice(0, s)), refMTH(d.slice(s)));
}

/** refPATH is PATH(m, D[n]) (RFC 9162 §2.1.3.1). */
export function refPATH(m: number, d: readonly FleetItem[]): RefNode[] {
  if (d.length <= 1) return [];
  const s = k(d.length);
  return m < s
    ? [...refPATH(m, d.slice(0, s)), refMTH(d.slice(s))]
    : [...refPATH(m - s, d.slice(s)), refMTH(d.slice(0, s))];
}
