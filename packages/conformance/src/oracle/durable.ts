// Output oracles for valid cases of C4, C9, C10 and C20 (sandbox-attest §8.1–§8.3, §15, §16; jcp
// §4.6): the Merkle Tree Hash of RFC 9162 §2.1.1 as the naive recursion it is defined by, the fleet
// tree with its sums the same way, and a pool ledger's and a mint ledger's heads and totals as plain
// sums over their entries. They compute what a valid input must give; they do not restate the
// refusals, so vectors that expect an error are not checked here (generate/oracle.ts). Nothing is
// imported from @sbx/sandbox-attest or @sbx/jcp-grant.
import {
  addressOf,
  blake3,
  canonicalBytes,
  chainGenesis,
  chainNext,
  formatDigest,
  fromBase64,
} from "@sbx/wire";
import type { Json, JsonObject } from "@sbx/wire";

const H = (...parts: Uint8Array[]): Uint8Array => blake3(Buffer.concat(parts));
const digest = (b: Uint8Array): string => formatDigest(b);

/** largestPowerOfTwoBelow n (n ≥ 2): the split point k of RFC 9162 §2.1.1. */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** mth is RFC 9162's MTH over leaf data, literally: H("") for none, H(0x00 ‖ d) for one, else split. */
function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return H(new Uint8Array());
  if (leaves.length === 1) return H(Uint8Array.of(0), leaves[0]!);
  const k = split(leaves.length);
  return H(Uint8Array.of(1), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** journal.head (§8.3): the leaves are the events' JCS bytes; the head is {size, root}. */
function journalHead(o: JsonObject): Json {
  const events = o.events as Json[];
  return { head: { size: events.length, root: digest(mth(events.map((e) => canonicalBytes(e)))) } };
}

/** path is RFC 9162 §2.1.3.1 PATH(m, D[n]) as its recursion: the sibling subtree roots, nearest first. */
function path(m: number, leaves: Uint8Array[]): Uint8Array[] {
  if (leaves.length <= 1) return [];
  const k = split(leaves.length);
  return m < k
    ? [...path(m, leaves.slice(0, k)), mth(leaves.slice(k))]
    : [...path(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}

/** journal.prove (§8.4): the event's index and its PATH in the journal's tree. */
function journalProve(o: JsonObject): Json {
  const leaves = (o.events as Json[]).map((e) => canonicalBytes(e));
  const index = o.index as number;
  return { proof: { index, path: path(index, leaves).map(digest) } };
}

interface Node {
  hash: Uint8Array;
  sum: bigint;
}

function u64be(n: bigint): Uint8Array {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
}

/** fleetTree is §16.2 by the same recursion, each node carrying the sum of its subtree. */
function fleetTree(items: JsonObject[]): Node {
  if (items.length === 0) return { hash: H(new Uint8Array()), sum: 0n };
  if (items.length === 1)
    return {
      hash: H(Uint8Array.of(0), canonicalBytes(items[0])),
      sum: BigInt(items[0]!.energy_uj as string),
    };
  const k = split(items.length);
  const [L, R] = [fleetTree(items.slice(0, k)), fleetTree(items.slice(k))];
  return { hash: H(Uint8Array.of(1), L.hash, u64be(L.sum), R.hash, u64be(R.sum)), sum: L.sum + R.sum };
}

/** fleet.build (§16.3): the receipt of the items in order. */
function fleetBuild(o: JsonObject): Json {
  const items = o.items as JsonObject[];
  const root = fleetTree(items);
  return {
    kind: "fleet",
    fleet: o.fleet as string,
    host: o.host as string,
    size: items.length,
    root: digest(root.hash),
    total_uj: root.sum.toString(),
    start_ms: o.start_ms as number,
    end_ms: o.end_ms as number,
  };
}

function payloadOf(env: unknown): JsonObject {
  const b = fromBase64((env as { payload: string }).payload);
  if (b === null) throw new Error("oracle: a valid case holds a payload that is not base64");
  return JSON.parse(Buffer.from(b).toString("utf8")) as JsonObject;
}

const sumOf = (figure: Json | undefined): bigint =>
  (figure as JsonObject[]).reduce((s, c) => s + BigInt(c.uj as string), 0n);

/** warmpool.verify (§15.7) for a valid ledger: the head, counts and the four totals as plain sums. */
function warmpoolVerify(o: JsonObject): Json {
  const ledger = o.ledger as { pool: unknown; entries: unknown[] };
  const pool = payloadOf(ledger.pool);
  const poolId = addressOf(pool);
  let head = chainGenesis("sandbox.warmpool/1", [poolId]);
  const state = new Map<string, string>();
  let [drawn, claimed, evicted] = [0n, 0n, 0n];
  const claims: string[] = [];
  let closed = false;
  for (const env of ledger.entries) {
    const e = payloadOf(env);
    head = chainNext(head, e);
    const item = e.item as string;
    switch (e.kind) {
      case "provisioned":
        drawn += sumOf(e.provision);
        state.set(item, "resident");
        break;
      case "accrued":
        drawn += sumOf(e.residency);
        break;
      case "claimed":
        claimed += BigInt(e.accrued_uj as string);
        state.set(item, "claimed");
        claims.push(addressOf(e));
        break;
      case "evicted":
        evicted += BigInt(e.overhead_uj as string);
        state.set(item, "evicted");
        break;
      case "closed":
        closed = true;
    }
  }
  const count = (s: string) => [...state.values()].filter((x) => x === s).length;
  return {
    pool_id: poolId,
    name: pool.name as string,
    host: pool.host as string,
    manifest: pool.manifest as string,
    head,
    entries: ledger.entries.length,
    items: {
      provisioned: state.size,
      resident: count("resident"),
      claimed: count("claimed"),
      evicted: count("evicted"),
    },
    drawn_uj: drawn.toString(),
    claimed_uj: claimed.toString(),
    evicted_uj: evicted.toString(),
    outstanding_uj: (drawn - claimed - evicted).toString(),
    closed,
    claims,
  };
}

/** standing.verify (jcp §4.6) for a valid ledger: the policy's address, the chain head and sums. */
function standingVerify(o: JsonObject): Json {
  const policy = addressOf(payloadOf(o.policy));
  const entries = (o.entries as unknown[]).map(payloadOf);
  let head = chainGenesis("jcp.mintledger/1", [policy]);
  for (const e of entries) head = chainNext(head, e);
  return {
    policy,
    head,
    length: entries.length,
    total_uj: entries.reduce((s, e) => s + BigInt(e.uj as string), 0n).toString(),
    children: entries.map((e) => e.child as string),
  };
}

const OPS: Record<string, (o: JsonObject) => Json> = {
  "journal.head": journalHead,
  "journal.prove": journalProve,
  "fleet.build": fleetBuild,
  "warmpool.verify": warmpoolVerify,
  "standing.verify": standingVerify,
};

/** durableOutputOracle computes the output a valid case of `op` must give, or undefined for another op. */
export function durableOutputOracle(op: string, input: Json): Json | undefined {
  const f = OPS[op];
  return f === undefined ? undefined : f(input as JsonObject);
}
