// §16.2 A fleet node as a 40-byte record, hash(32) ‖ u64be(sum)(8): the form the fleet tree stores
// its nodes in, and exactly the bytes a parent's hash input holds for each child, so the input of
// node(L, R) is 0x01 followed by L's and R's records side by side. Sums are read and written as two
// 32-bit halves, so the build needs no BigInt.
import { isAmount, parseAmount, type Amount } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { FleetNode } from "./types.ts";

/** The length in bytes of one node record. */
export const RECORD = 40;

const U64_MAX = (1n << 64n) - 1n;
const TWO32 = 2 ** 32;

/** u32be reads the big-endian 32-bit word at b[at] (half of a §16.2 u64be sum). */
export function u32be(b: Uint8Array, at: number): number {
  return ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
}

/** putU32be writes `x` (0 ≤ x < 2^32) as a big-endian 32-bit word at b[at] (§16.2). */
export function putU32be(b: Uint8Array, at: number, x: number): void {
  b[at] = x >>> 24;
  b[at + 1] = x >>> 16;
  b[at + 2] = x >>> 8;
  b[at + 3] = x;
}

/** putSum writes a sum `hi`·2^32 + `lo` as u64be at b[at]. */
function putSum(b: Uint8Array, at: number, hi: number, lo: number): void {
  putU32be(b, at, hi);
  putU32be(b, at + 4, lo);
}

/**
 * putAmount writes an amount (an item's energy_uj, §16.1) as u64be at b[at]. Refuses as parseAmount does
 * (`BadAmount`, `AmountOverflow`); amounts of up to 15 digits are read without BigInt.
 */
export function putAmount(b: Uint8Array, at: number, s: Amount): void {
  if (s.length <= 15 && isAmount(s)) {
    const n = Number(s); // below 10^15 < 2^53: exact
    putSum(b, at, Math.floor(n / TWO32), n >>> 0);
    return;
  }
  const v = parseAmount(s);
  putSum(b, at, Number(v >> 32n), Number(v & 0xffffffffn));
}

/**
 * addSums writes the sum of the u64be sums at a[ai] and b[bi] as u64be at out[at] (§16.2). Refuses
 * `EnergyOverflow` above 2^64 − 1 (§16.2), writing nothing.
 */
export function addSums(
  a: Uint8Array,
  ai: number,
  b: Uint8Array,
  bi: number,
  out: Uint8Array,
  at: number,
): void {
  const lo = u32be(a, ai + 4) + u32be(b, bi + 4);
  const hi = u32be(a, ai) + u32be(b, bi) + (lo >= TWO32 ? 1 : 0);
  if (hi >= TWO32) {
    const sum = sumAt(a, ai) + sumAt(b, bi);
    throw new SandboxAttestError("EnergyOverflow", `subtree energy ${sum} exceeds 2^64 - 1`);
  }
  putSum(out, at, hi, lo >>> 0);
}

/** sumAt reads the u64be sum at b[at] (§16.2). */
export function sumAt(b: Uint8Array, at: number): bigint {
  return (BigInt(u32be(b, at)) << 32n) | BigInt(u32be(b, at + 4));
}

/** nodeAt reads the record at b[at] as a §16.2 node. */
export function nodeAt(b: Uint8Array, at: number): FleetNode {
  return { hash: b.slice(at, at + 32), sum: sumAt(b, at + 32) };
}

/** putNode writes a §16.2 node as a record at b[at]. Refuses `EnergyOverflow` for a sum outside 0..2^64 − 1. */
export function putNode(b: Uint8Array, at: number, n: FleetNode): void {
  if (n.sum < 0n || n.sum > U64_MAX)
    throw new SandboxAttestError("EnergyOverflow", `subtree energy ${n.sum} exceeds 2^64 - 1`);
  if (n.hash.length !== 32) throw new RangeError(`a node hash is 32 bytes, got ${n.hash.length}`);
  b.set(n.hash, at);
  putSum(b, at + 32, Number(n.sum >> 32n), Number(n.sum & 0xffffffffn));
}
