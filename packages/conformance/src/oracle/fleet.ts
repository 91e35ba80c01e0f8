// The fleet proof oracles (sandbox-attest §16.3–§16.5), refusals included: the receipts opened
// with the trusted hosts, the proofs' checks in the order §16.4 and §16.5 state, and RFC 9162
// §2.1.3.2 and §2.1.4.2 run with the (hash, sum) node of §16.2. Written from the spec; nothing is
// imported from @sbx/sandbox-attest. Generation compares it with every fleet proof vector.
import {
  blake3,
  canonicalBytes,
  isAmount,
  isDigest,
  isWireError,
  openEnvelope,
  parseDigest,
  type Json,
  type JsonObject,
} from "@sbx/wire";
import { no, Refused } from "./jcp-form.ts";
import type { OracleResult } from "./jcp.ts";

const MAX = (1n << 64n) - 1n;
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/;

interface Node {
  hash: Uint8Array;
  sum: bigint;
}

function u64be(n: bigint): Uint8Array {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
}

/** node(L, R) of §16.2; a sum above 2⁶⁴ − 1 is `EnergyOverflow`. */
function node(L: Node, R: Node): Node {
  const sum = L.sum + R.sum;
  if (sum > MAX) no("EnergyOverflow");
  return { hash: blake3(Buffer.concat([Uint8Array.of(1), L.hash, u64be(L.sum), R.hash, u64be(R.sum)])), sum };
}

/** openReceipt is §16.3 "Trusted hosts": the envelope with the hosts as accepted signers, its shape, its host. */
function openReceipt(env: unknown, hosts: string[]): JsonObject {
  let o;
  try {
    o = openEnvelope(env, {
      payloadType: "application/vnd.sandbox-attest.fleet-receipt+json",
      signers: hosts,
    });
  } catch (e) {
    if (isWireError(e)) no(e.code);
    throw e;
  }
  const r = o.payload;
  if (
    Object.keys(r).sort().join() !== "end_ms,fleet,host,kind,root,size,start_ms,total_uj" ||
    r.kind !== "fleet"
  )
    no("BadFleetReceipt");
  if (typeof r.fleet !== "string" || !NAME.test(r.fleet) || typeof r.host !== "string") no("BadFleetReceipt");
  if (!r.host.startsWith("did:key:") || !isCount(r.size) || !isDigest(r.root) || !isAmount(r.total_uj))
    no("BadFleetReceipt");
  if (!isCount(r.start_ms) || !isCount(r.end_ms) || r.end_ms < r.start_ms) no("BadFleetReceipt");
  if (!o.signers.includes(r.host)) no("BadFleetReceipt");
  return r;
}

/** checkItem is §16.1: exactly {item, head, energy_uj, outcome} of their forms (`BadFleetItem`). */
function checkItem(v: unknown): JsonObject {
  if (!isObj(v) || Object.keys(v).sort().join() !== "energy_uj,head,item,outcome") no("BadFleetItem");
  if (typeof v.item !== "string" || !NAME.test(v.item) || !isDigest(v.head) || !isAmount(v.energy_uj))
    no("BadFleetItem");
  if (!["completed", "failed", "abandoned"].includes(v.outcome as string)) no("BadFleetItem");
  return v as JsonObject;
}

/** pathLength is |PATH(m, D[n])| by the recursion of RFC 9162 §2.1.3.1. */
function pathLength(m: number, n: number): number {
  if (n <= 1) return 0;
  let k = 1;
  while (k * 2 < n) k *= 2;
  return 1 + (m < k ? pathLength(m, k) : pathLength(m - k, n - k));
}

function wireNode(v: unknown): Node {
  if (!isObj(v) || Object.keys(v).sort().join() !== "hash,uj" || !isDigest(v.hash) || !isAmount(v.uj))
    no("BadFleetReceipt");
  return { hash: parseDigest(v.hash), sum: BigInt(v.uj) };
}

/** rootFrom is RFC 9162 §2.1.3.2 with `node` as the combining function. */
function rootFrom(index: number, size: number, leaf: Node, path: Node[]): Node {
  let [fn, sn, r] = [BigInt(index), BigInt(size - 1), leaf];
  for (const p of path) {
    if (sn === 0n) no("FleetRootMismatch");
    if ((fn & 1n) === 1n || fn === sn) {
      r = node(p, r);
      while ((fn & 1n) === 0n && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else r = node(r, p);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  if (sn !== 0n) no("FleetRootMismatch");
  return r;
}

/** membership is fleet.verify_membership (§16.4), checks in the order the section states. */
function membership(o: JsonObject): Json {
  const r = openReceipt(o.receipt, o.hosts as string[]);
  const p = o.proof;
  if (
    !isObj(p) ||
    p.kind !== "fleet-membership" ||
    Object.keys(p).sort().join() !== "index,item,kind,path,size"
  )
    no("BadFleetReceipt");
  if (!isCount(p.size) || p.size !== r.size) no("FleetProofSize");
  if (!isCount(p.index) || p.index >= r.size) no("FleetIndexRange");
  const item = checkItem(p.item);
  if (!Array.isArray(p.path)) no("BadFleetReceipt");
  if (p.path.length !== pathLength(p.index, p.size)) no("FleetProofSize");
  const leaf = {
    hash: blake3(Buffer.concat([Uint8Array.of(0), canonicalBytes(item)])),
    sum: BigInt(item.energy_uj as string),
  };
  const root = rootFrom(p.index, p.size, leaf, p.path.map(wireNode));
  if (Buffer.compare(Buffer.from(root.hash), Buffer.from(parseDigest(r.root as string))) !== 0)
    no("FleetRootMismatch");
  if (root.sum !== BigInt(r.total_uj as string)) no("FleetSumMismatch");
  return {
    index: p.index,
    item: item.item as string,
    energy_uj: item.energy_uj as string,
    total_uj: r.total_uj as string,
  };
}

const same = (a: Node, b: Node): boolean =>
  Buffer.from(a.hash).equals(Buffer.from(b.hash)) && a.sum === b.sum;

/** consistent is RFC 9162 §2.1.4.2 with `node` as the combining function; false where it fails. */
function consistent(m: number, n: number, first: Node, second: Node, proof: Node[]): boolean {
  if (m === n) return proof.length === 0 && same(first, second);
  if (proof.length === 0) return false;
  const path = (m & (m - 1)) === 0 ? [first, ...proof] : proof;
  let [fn, sn] = [BigInt(m - 1), BigInt(n - 1)];
  while ((fn & 1n) === 1n) [fn, sn] = [fn >> 1n, sn >> 1n];
  let [fr, sr] = [path[0]!, path[0]!];
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if ((fn & 1n) === 1n || fn === sn) {
      [fr, sr] = [node(c, fr), node(c, sr)];
      while ((fn & 1n) === 0n && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else sr = node(sr, c);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  return sn === 0n && same(fr, first) && same(sr, second);
}

/** consistency is fleet.verify_consistency (§16.5), checks in the order the section states. */
function consistency(o: JsonObject): Json {
  const hosts = o.hosts as string[];
  const [r1, r2] = [openReceipt(o.receipt1, hosts), openReceipt(o.receipt2, hosts)];
  const p = o.proof;
  if (!isObj(p) || p.kind !== "fleet-consistency" || Object.keys(p).sort().join() !== "kind,path,size1,size2")
    no("BadFleetReceipt");
  if (p.size1 !== r1.size || p.size2 !== r2.size) no("FleetProofSize");
  if (r1.fleet !== r2.fleet || r1.host !== r2.host) no("FleetNotAppend");
  const [m, n] = [r1.size as number, r2.size as number];
  if (
    m > n ||
    (r2.start_ms as number) > (r1.start_ms as number) ||
    (r2.end_ms as number) < (r1.end_ms as number)
  )
    no("FleetNotAppend");
  if (!Array.isArray(p.path)) no("BadFleetReceipt");
  const path = p.path.map(wireNode);
  const root = (r: JsonObject): Node => ({
    hash: parseDigest(r.root),
    sum: BigInt(r.total_uj as string),
  });
  const empty = { hash: blake3(new Uint8Array()), sum: 0n };
  const ok =
    m === 0 ? path.length === 0 && same(root(r1), empty) : consistent(m, n, root(r1), root(r2), path);
  if (!ok) no("FleetNotAppend");
  return null;
}

/** fleetOracle answers the fleet proof ops, refusals included; undefined for any other op. */
export function fleetOracle(op: string, input: Json): OracleResult | undefined {
  const f =
    op === "fleet.verify_membership"
      ? membership
      : op === "fleet.verify_consistency"
        ? consistency
        : undefined;
  if (f === undefined) return undefined;
  try {
    return { ok: true, output: f(input as JsonObject) };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.code };
    throw e;
  }
}
