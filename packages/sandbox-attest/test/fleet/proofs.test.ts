// §16.4–§16.5 Property tests: for random fleets up to 10,000 items every membership proof verifies
// and has at most ⌈log₂ n⌉ nodes; every single-bit change to a proof, a leaf, a size or a sum is
// refused; consistency proofs verify between any two sizes and refuse a fleet that was rewritten.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { fromHex, toHex, type Digest } from "@sbx/wire";
import {
  buildFleet,
  fleetReceipt,
  itemText,
  verifyFleetConsistency,
  verifyMembership,
  type FleetReceipt,
  type MembershipProof,
  type WireNode,
} from "@sbx/sandbox-attest/fleet";
import { makeItems } from "./shared.ts";

const span = { fleet: "f", start_ms: 1000, end_ms: 2000 };
const HOST = "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK";
const ceilLog2 = (n: number): number => (n <= 1 ? 0 : Math.ceil(Math.log2(n)));

function refused(f: () => void, what: string): void {
  let threw = false;
  try {
    f();
  } catch (e) {
    threw = typeof (e as { code?: unknown }).code === "string";
    if (!threw) throw e;
  }
  assert.ok(threw, `${what} was accepted`);
}

function flipDigest(d: Digest, bit: number): Digest {
  const b = fromHex(d.slice(7));
  b[bit >> 3]! ^= 1 << (bit & 7);
  return `blake3:${toHex(b)}`;
}
const flipCount = (x: number, bit: number): number => Number(BigInt(x) ^ (1n << BigInt(bit)));
const flipAmount = (a: string, bit: number): string => (BigInt(a) ^ (1n << BigInt(bit))).toString();

test("every membership proof of random fleets up to 10,000 items verifies and is at most ⌈log₂ n⌉ long", () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 10_000 })),
      fc.integer(),
      (n, seed) => {
        const f = buildFleet(makeItems(n, seed));
        const r = fleetReceipt(f, HOST, span);
        for (let i = 0; i < n; i++) {
          const p = f.proveMember(i);
          assert.ok(p.path.length <= ceilLog2(n), `n=${n} i=${i}: ${p.path.length} nodes`);
          verifyMembership(r, p);
        }
      },
    ),
    { numRuns: 8 },
  );
});

function flipsOfProof(p: MembershipProof): MembershipProof[] {
  const out: MembershipProof[] = [];
  const withNode = (j: number, node: WireNode) => ({
    ...p,
    path: p.path.map((x, k) => (k === j ? node : x)),
  });
  p.path.forEach((node, j) => {
    for (let b = 0; b < 256; b++) out.push(withNode(j, { ...node, hash: flipDigest(node.hash, b) }));
    for (let b = 0; b < 64; b++) out.push(withNode(j, { ...node, uj: flipAmount(node.uj, b) }));
  });
  for (let b = 0; b < 53; b++) out.push({ ...p, size: flipCount(p.size, b) });
  for (let b = 0; b < 53; b++) out.push({ ...p, index: flipCount(p.index, b) });
  for (let b = 0; b < 64; b++)
    out.push({ ...p, item: { ...p.item, energy_uj: flipAmount(p.item.energy_uj, b) } });
  for (let b = 0; b < 256; b++) out.push({ ...p, item: { ...p.item, head: flipDigest(p.item.head, b) } });
  return out;
}

function leafFlips(p: MembershipProof): unknown[] {
  // Every bit of the leaf's canonical bytes: what parses is a different item, what does not is refused.
  const text = itemText(p.item);
  const out: unknown[] = [];
  for (let i = 0; i < text.length; i++)
    for (let b = 0; b < 7; b++) {
      const t = text.slice(0, i) + String.fromCharCode(text.charCodeAt(i) ^ (1 << b)) + text.slice(i + 1);
      try {
        out.push(JSON.parse(t));
      } catch {
        /* not JSON: a verifier never gets as far as a leaf */
      }
    }
  return out;
}

test("every single-bit change to a proof, a leaf, a size or a sum is refused", () => {
  fc.assert(
    fc.property(fc.integer({ min: 2, max: 3000 }), fc.integer(), fc.nat(), (n, seed, pick) => {
      const f = buildFleet(makeItems(n, seed));
      const r = fleetReceipt(f, HOST, span);
      const p = f.proveMember(pick % n);
      verifyMembership(r, p);
      for (const q of flipsOfProof(p))
        refused(() => verifyMembership(r, q), `flipped proof ${JSON.stringify(q).slice(0, 80)}`);
      for (const item of leafFlips(p))
        refused(
          () => verifyMembership(r, { ...p, item } as MembershipProof),
          `flipped leaf ${JSON.stringify(item)}`,
        );
      const heads: FleetReceipt[] = [];
      for (let b = 0; b < 53; b++) heads.push({ ...r, size: flipCount(r.size, b) });
      for (let b = 0; b < 64; b++) heads.push({ ...r, total_uj: flipAmount(r.total_uj, b) });
      for (let b = 0; b < 256; b++) heads.push({ ...r, root: flipDigest(r.root, b) });
      for (const h of heads) refused(() => verifyMembership(h, p), `flipped receipt ${JSON.stringify(h)}`);
    }),
    { numRuns: 8 },
  );
});

test("consistency proofs verify between any two sizes; bit flips and rewritten fleets are refused", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2000 }), fc.nat(), fc.integer(), (n, a, seed) => {
      const items = makeItems(n, seed);
      const f = buildFleet(items);
      const m = 1 + (a % n);
      const [r1, r2] = [fleetReceipt(f, HOST, { ...span, size: m }), fleetReceipt(f, HOST, span)];
      const p = f.proveConsistency(m);
      assert.ok(p.path.length <= ceilLog2(n) + 1);
      verifyFleetConsistency(r1, r2, p);
      p.path.forEach((node, j) => {
        for (const bit of [0, 77, 255])
          refused(
            () =>
              verifyFleetConsistency(r1, r2, {
                ...p,
                path: p.path.map((x, k) => (k === j ? { ...node, hash: flipDigest(node.hash, bit) } : x)),
              }),
            "hash flip",
          );
        for (const bit of [0, 13, 63])
          refused(
            () =>
              verifyFleetConsistency(r1, r2, {
                ...p,
                path: p.path.map((x, k) => (k === j ? { ...node, uj: flipAmount(node.uj, bit) } : x)),
              }),
            "sum flip",
          );
      });
      for (const bit of [0, 5, 40]) {
        refused(
          () => verifyFleetConsistency({ ...r1, total_uj: flipAmount(r1.total_uj, bit) }, r2, p),
          "old total flip",
        );
        refused(
          () => verifyFleetConsistency(r1, { ...r2, total_uj: flipAmount(r2.total_uj, bit) }, p),
          "new total flip",
        );
      }
      // A later fleet that rewrote an earlier item is not an append.
      const rewritten = buildFleet(
        items.map((it, i) =>
          i === (seed >>> 0) % m ? { ...it, outcome: it.outcome === "failed" ? "completed" : "failed" } : it,
        ),
      );
      if (m < n)
        refused(
          () =>
            verifyFleetConsistency(r1, fleetReceipt(rewritten, HOST, span), rewritten.proveConsistency(m)),
          "rewritten fleet",
        );
    }),
    { numRuns: 40 },
  );
});
