// C10: fleet records (§16). Valid fleets, receipts, membership proofs for every index, consistency
// proofs between sizes; broken ones made systematically (index ±1, size ±1, a node removed or added,
// a bit flipped in every node hash, every node sum off by one, a leaf altered, a signed total that
// does not add up, a rewritten fleet). Expected codes are stated here by construction.
import { addressOf, formatDigest, signPayload, type Envelope, type Json, type JsonObject } from "@sbx/wire";
import {
  buildFleet,
  FLEET_RECEIPT_TYPE,
  fleetReceipt,
  openFleetReceipt,
  verifyFleetConsistency,
  verifyMembership,
  type ConsistencyProof,
  type Fleet,
  type FleetItem,
  type FleetOutcome,
  type MembershipProof,
} from "@sbx/sandbox-attest/fleet";
import { errCase, flipHexByte, okCase } from "../generate/build.ts";
import { key } from "../generate/keys.ts";
import type { ConformanceClass, Handler, Vector } from "../types.ts";
import { strings } from "./input.ts";

const C = "C10" as const;
const host = key("host");
const hosts = [host.did];
const span = { fleet: "c10", start_ms: 1_700_000_000_000, end_ms: 1_700_000_900_000 };
const OUTCOMES: FleetOutcome[] = ["completed", "failed", "abandoned"];

const obj = (i: Json): JsonObject => i as JsonObject;
const ops: Record<string, Handler> = {
  "fleet.build": (i) => {
    const o = obj(i);
    const f = buildFleet(o.items as unknown[]);
    return fleetReceipt(f, o.host as string, {
      fleet: o.fleet as string,
      start_ms: Number(o.start_ms),
      end_ms: Number(o.end_ms),
    }) as unknown as Json;
  },
  "fleet.verify_membership": (i) => {
    const o = obj(i);
    // §16.3: the trusted hosts are an input of the op, never a default of the verifier.
    const r = openFleetReceipt(o.receipt as unknown as Envelope, strings(o.hosts, "hosts"));
    const p = o.proof as unknown as MembershipProof;
    verifyMembership(r, p);
    return { index: p.index, item: p.item.item, energy_uj: p.item.energy_uj, total_uj: r.total_uj };
  },
  "fleet.verify_consistency": (i) => {
    const o = obj(i);
    const trusted = strings(o.hosts, "hosts");
    const r1 = openFleetReceipt(o.receipt1 as unknown as Envelope, trusted);
    const r2 = openFleetReceipt(o.receipt2 as unknown as Envelope, trusted);
    verifyFleetConsistency(r1, r2, o.proof as unknown as ConsistencyProof);
    return null;
  },
};

function items(n: number, tag = "c10"): FleetItem[] {
  return Array.from({ length: n }, (_, i) => ({
    item: `${tag}-${i}`,
    head: addressOf({ run: tag, i }),
    energy_uj: String(1_000_003 * (i + 1) + 7 * i * i),
    outcome: OUTCOMES[i % 3] as FleetOutcome,
  }));
}
const sign = (f: Fleet, size?: number): Envelope =>
  signPayload(
    FLEET_RECEIPT_TYPE,
    fleetReceipt(f, host.did, { ...span, ...(size === undefined ? {} : { size }) }),
    host,
  );
const J = (v: unknown): Json => v as Json;

function buildVectors(): Vector[] {
  const out = [0, 1, 2, 3, 5, 7, 8, 9, 16, 17].map((n) => {
    const input = { items: J(items(n)), host: host.did, ...span };
    return okCase(
      C,
      `c10-build-${n}`,
      `fleet of ${n}: size, root and total (§16.2)`,
      "fleet.build",
      input,
      J(ops["fleet.build"]?.(input)),
    );
  });
  const dup = items(3);
  out.push(
    errCase(
      C,
      "c10-build-duplicate",
      "an item id twice in one fleet",
      "fleet.build",
      { items: J([...dup, dup[1]]), host: host.did, ...span },
      "DuplicateFleetItem",
    ),
  );
  out.push(
    errCase(
      C,
      "c10-build-bad-outcome",
      "an item whose run has no close outcome",
      "fleet.build",
      { items: J([{ ...dup[0], outcome: "running" }]), host: host.did, ...span },
      "BadFleetItem",
    ),
  );
  out.push(
    errCase(
      C,
      "c10-build-overflow",
      "item energies summing above 2^64 − 1",
      "fleet.build",
      {
        items: J([
          { ...dup[0], energy_uj: "18446744073709551615" },
          { ...dup[1], energy_uj: "1" },
        ]),
        host: host.did,
        ...span,
      },
      "EnergyOverflow",
    ),
  );
  return out;
}

function membershipVectors(): Vector[] {
  const f = buildFleet(items(7));
  const receipt = J(sign(f));
  const input = (p: unknown, r: Json = receipt, trusted: string[] = hosts): Json => ({
    receipt: r,
    hosts: trusted,
    proof: J(p),
  });
  const out: Vector[] = [];
  for (let i = 0; i < 7; i++) {
    const p = f.proveMember(i);
    out.push(
      okCase(
        C,
        `c10-member-${i}`,
        `membership of item ${i} of 7: in the fleet and counted in the total`,
        "fleet.verify_membership",
        input(p),
        J(ops["fleet.verify_membership"]?.(input(p))),
      ),
    );
  }
  const one = buildFleet(items(1));
  out.push(
    okCase(
      C,
      "c10-member-single",
      "the one item of a fleet of 1 (empty path)",
      "fleet.verify_membership",
      input(one.proveMember(0), J(sign(one))),
      J(ops["fleet.verify_membership"]?.(input(one.proveMember(0), J(sign(one))))),
    ),
  );
  const p = f.proveMember(2);
  const e = (id: string, desc: string, q: unknown, code: string, r: Json = receipt, t: string[] = hosts) =>
    out.push(errCase(C, `c10-member-${id}`, desc, "fleet.verify_membership", input(q, r, t), code));
  e(
    "wrong-size-receipt",
    "a proof for the fleet of 6 against the receipt of 7",
    buildFleet(items(6)).proveMember(2),
    "FleetProofSize",
  );
  e("size-plus-1", "proof size one above the receipt's", { ...p, size: 8 }, "FleetProofSize");
  e("size-minus-1", "proof size one below the receipt's", { ...p, size: 6 }, "FleetProofSize");
  e("index-plus-1", "index one to the right", { ...p, index: 3 }, "FleetRootMismatch");
  e("index-minus-1", "index one to the left", { ...p, index: 1 }, "FleetRootMismatch");
  e("index-out", "index at the size", { ...p, index: 7 }, "FleetIndexRange");
  e("node-removed", "last node removed", { ...p, path: p.path.slice(0, -1) }, "FleetProofSize");
  e("node-added", "a node appended", { ...p, path: [...p.path, p.path[0]] }, "FleetProofSize");
  // §16.4: each node is {hash, uj} exactly (BadFleetReceipt), checked as the path is run, after
  // the sizes, the index, the item and the path's length.
  const [n0, ...rest] = p.path;
  e(
    "node-malformed-short",
    "a node without uj in a path one node short: the length (FleetProofSize) before the node's form",
    { ...p, path: [{ hash: n0!.hash }, ...rest.slice(0, -1)] },
    "FleetProofSize",
  );
  e(
    "node-malformed-wrong-size",
    "a node whose uj is a JSON number, proof size 8: FleetProofSize before the node's form",
    { ...p, size: 8, path: [{ ...n0!, uj: 1 }, ...rest] },
    "FleetProofSize",
  );
  e(
    "node-extra-member",
    "a node with a member beyond hash and uj",
    { ...p, path: [{ ...n0!, extra: 1 }, ...rest] },
    "BadFleetReceipt",
  );
  p.path.forEach((n, j) => {
    e(
      `node-${j}-hash-bit`,
      `node ${j}: one bit of its hash flipped`,
      {
        ...p,
        path: p.path.map((x, k) =>
          k === j ? { ...x, hash: `blake3:${flipHexByte(n.hash.slice(7), 31)}` } : x,
        ),
      },
      "FleetRootMismatch",
    );
    e(
      `node-${j}-sum-plus-1`,
      `node ${j}: its energy sum one more`,
      { ...p, path: p.path.map((x, k) => (k === j ? { ...x, uj: String(BigInt(n.uj) + 1n) } : x)) },
      "FleetRootMismatch",
    );
  });
  e(
    "leaf-energy",
    "the item's energy one less",
    { ...p, item: { ...p.item, energy_uj: String(BigInt(p.item.energy_uj) - 1n) } },
    "FleetRootMismatch",
  );
  e(
    "leaf-outcome",
    "the item's outcome changed",
    { ...p, item: { ...p.item, outcome: "completed" } },
    "FleetRootMismatch",
  );
  e(
    "leaf-head",
    "the item's final head changed",
    { ...p, item: { ...p.item, head: formatDigest(new Uint8Array(32)) } },
    "FleetRootMismatch",
  );
  const padded = { ...fleetReceipt(f, host.did, span) };
  e(
    "sum-does-not-add-up",
    "a validly signed receipt whose total is one more than the tree's",
    p,
    "FleetSumMismatch",
    J(signPayload(FLEET_RECEIPT_TYPE, { ...padded, total_uj: String(BigInt(padded.total_uj) + 1n) }, host)),
  );
  e(
    "total-missing-item",
    "a signed total that leaves out the proved item's energy",
    p,
    "FleetSumMismatch",
    J(
      signPayload(
        FLEET_RECEIPT_TYPE,
        { ...padded, total_uj: String(BigInt(padded.total_uj) - BigInt(p.item.energy_uj)) },
        host,
      ),
    ),
  );
  const byMallory = J(
    signPayload(FLEET_RECEIPT_TYPE, { ...padded, host: key("mallory").did }, key("mallory")),
  );
  e("other-signer", "a receipt signed by a key other than the trusted hosts", p, "UnknownSigner", byMallory);
  e("no-trusted-hosts", "no trusted hosts at all: every receipt is refused", p, "UnknownSigner", receipt, []);
  const trustMallory = input(p, byMallory, [key("mallory").did]);
  out.push(
    okCase(
      C,
      "c10-member-trusted-other-host",
      "the same receipt by mallory verifies for a verifier that trusts mallory: hosts come from the input",
      "fleet.verify_membership",
      trustMallory,
      J(ops["fleet.verify_membership"]?.(trustMallory)),
    ),
  );
  return out;
}

function consistencyVectors(): Vector[] {
  const all = items(9);
  const f = buildFleet(all);
  const input = (
    m: number,
    n: number,
    proof: unknown,
    r1: Envelope = sign(f, m),
    r2: Envelope = sign(f, n),
  ): Json => ({ receipt1: J(r1), receipt2: J(r2), hosts, proof: J(proof) });
  const out: Vector[] = [];
  for (const [m, n] of [
    [1, 9],
    [3, 9],
    [4, 9],
    [4, 8],
    [5, 7],
    [9, 9],
    [8, 9],
  ] as const)
    out.push(
      okCase(
        C,
        `c10-consistency-${m}-${n}`,
        `the fleet of ${m} is a prefix of the fleet of ${n}, sums included`,
        "fleet.verify_consistency",
        input(m, n, f.proveConsistency(m, n)),
        null,
      ),
    );
  const p = f.proveConsistency(5, 9);
  const e = (id: string, desc: string, i: Json, code: string) =>
    out.push(errCase(C, `c10-consistency-${id}`, desc, "fleet.verify_consistency", i, code));
  const rewritten = buildFleet(all.map((it, i) => (i === 2 ? { ...it, outcome: "completed" as const } : it)));
  e(
    "non-append",
    "a later fleet that rewrote item 2 of the first 5",
    input(5, 9, rewritten.proveConsistency(5), sign(f, 5), sign(rewritten)),
    "FleetNotAppend",
  );
  e("reversed", "receipts given newest first", input(9, 5, p, sign(f, 9), sign(f, 5)), "FleetProofSize");
  e(
    "wrong-sizes",
    "a proof for 4 → 9 against receipts of 5 and 9",
    input(5, 9, f.proveConsistency(4, 9)),
    "FleetProofSize",
  );
  p.path.forEach((n, j) => {
    e(
      `node-${j}-hash-bit`,
      `node ${j}: one bit of its hash flipped`,
      input(5, 9, {
        ...p,
        path: p.path.map((x, k) =>
          k === j ? { ...x, hash: `blake3:${flipHexByte(n.hash.slice(7), 0)}` } : x,
        ),
      }),
      "FleetNotAppend",
    );
    e(
      `node-${j}-sum-plus-1`,
      `node ${j}: its energy sum one more`,
      input(5, 9, {
        ...p,
        path: p.path.map((x, k) => (k === j ? { ...x, uj: String(BigInt(n.uj) + 1n) } : x)),
      }),
      "FleetNotAppend",
    );
  });
  // §16.5: a path of the wrong length is a proof that does not reproduce (FleetNotAppend), not a
  // proof for other sizes (FleetProofSize, which compares only size1 and size2 with the receipts).
  e("node-removed", "last node removed", input(5, 9, { ...p, path: p.path.slice(0, -1) }), "FleetNotAppend");
  e("node-added", "a node appended", input(5, 9, { ...p, path: [...p.path, p.path[0]] }), "FleetNotAppend");
  // §16.5: each node's form (BadFleetReceipt) is checked after the sizes, the fleet and the spans,
  // and before the path is run (its length included).
  e(
    "node-malformed-short",
    "a node without uj in a path one node short: BadFleetReceipt, the nodes' form before the path's length",
    input(5, 9, { ...p, path: [{ hash: p.path[0]!.hash }, ...p.path.slice(1, -1)] }),
    "BadFleetReceipt",
  );
  // §16.5: from the empty fleet, only the empty path with the empty tree's root and zero total.
  out.push(
    okCase(
      C,
      "c10-consistency-0-9",
      "the empty fleet is a prefix of every fleet: empty path",
      "fleet.verify_consistency",
      input(0, 9, { kind: "fleet-consistency", size1: 0, size2: 9, path: [] }),
      null,
    ),
  );
  // §16.5: between equal sizes (RFC 9162), only the empty path, with equal roots and totals.
  e(
    "equal-with-path",
    "a proof between equal sizes that carries a node",
    input(9, 9, { kind: "fleet-consistency", size1: 9, size2: 9, path: [p.path[0]] }),
    "FleetNotAppend",
  );
  e(
    "equal-other-root",
    "an empty path between two fleets of 9 with different roots",
    input(9, 9, { kind: "fleet-consistency", size1: 9, size2: 9, path: [] }, sign(f), sign(rewritten)),
    "FleetNotAppend",
  );
  e(
    "from-0-with-path",
    "a proof from the empty fleet that carries a node",
    input(0, 9, { kind: "fleet-consistency", size1: 0, size2: 9, path: [p.path[0]] }),
    "FleetNotAppend",
  );
  const r2 = fleetReceipt(f, host.did, span);
  e(
    "later-total-off",
    "the later receipt's total one more than its tree's: sums not consistent",
    input(
      5,
      9,
      p,
      sign(f, 5),
      signPayload(FLEET_RECEIPT_TYPE, { ...r2, total_uj: String(BigInt(r2.total_uj) + 1n) }, host),
    ),
    "FleetNotAppend",
  );
  e(
    "other-fleet",
    "receipts of differently named fleets",
    input(5, 9, p, sign(f, 5), signPayload(FLEET_RECEIPT_TYPE, { ...r2, fleet: "other" }, host)),
    "FleetNotAppend",
  );
  return out;
}

export const klass: ConformanceClass = {
  id: C,
  title: "fleet records",
  file: "durable.json",
  ops,
  generate: () => [...buildVectors(), ...membershipVectors(), ...consistencyVectors()],
};
