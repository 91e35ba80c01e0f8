// §16.2 The fast fleet tree against the literal reference, the item's canonical bytes against the
// general JCS encoder, and receipts: signed, bound to size, root, total and span.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { canonicalize, formatDigest, parseAmount, signPayload, testKey, toHex } from "@sbx/wire";
import { isSandboxAttestError } from "../../src/errors.ts";
import { MerkleTree } from "@sbx/sandbox-attest/merkle";
import {
  buildFleet,
  Fleet,
  fleetBlake3,
  FLEET_RECEIPT_TYPE,
  fleetReceipt,
  itemText,
  openFleetReceipt,
  parseFleetItem,
  signFleetReceipt,
  toWireNode,
  type FleetItem,
} from "@sbx/sandbox-attest/fleet";
import { refMTH, refPATH } from "./reference.ts";
import { makeItems } from "./shared.ts";

const host = testKey("host");
const span = { fleet: "nightly", start_ms: 1_700_000_000_000, end_ms: 1_700_000_360_000 };

const itemArb = fc.record({
  item: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,40}$/),
  head: fc.uint8Array({ minLength: 32, maxLength: 32 }).map(formatDigest),
  energy_uj: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map(String),
  outcome: fc.constantFrom("completed" as const, "failed" as const, "abandoned" as const),
});

test("itemText is JCS(item) for every valid item", () => {
  fc.assert(
    fc.property(itemArb, (it) => {
      assert.equal(itemText(parseFleetItem(it)), canonicalize(it));
    }),
    { numRuns: 500 },
  );
});

test("fleet root and every path equal the literal RFC 9162 recursion over (hash, sum) nodes", () => {
  for (let n = 0; n <= 70; n++) {
    const items = makeItems(n, n + 7);
    const f = buildFleet(items);
    const ref = refMTH(items);
    assert.equal(toHex(f.root().hash), toHex(ref.hash), `n=${n}`);
    assert.equal(f.root().sum, ref.sum, `n=${n}`);
    assert.equal(
      f.root().sum,
      items.reduce((s, i) => s + parseAmount(i.energy_uj), 0n),
      `n=${n} total`,
    );
    for (let m = 0; m < n; m++)
      assert.deepEqual(
        f.proveMember(m).path,
        refPATH(m, items).map((x) => toWireNode(x)),
        `n=${n} m=${m}`,
      );
  }
});

test("the flat node store gives the roots and proofs of the object-per-node MerkleTree, sized or grown", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1200 }), fc.nat(), fc.nat(), (n, a, b) => {
      const items = makeItems(n, n);
      const sized = buildFleet(items);
      const grown = new Fleet();
      for (const it of items) grown.append(it);
      const ref = new MerkleTree(
        fleetBlake3,
        items.map((it) => fleetBlake3.leaf(it)),
      );
      const [m, i] = [1 + (a % n), b % n];
      for (const f of [sized, grown]) {
        assert.deepEqual(f.root(m), ref.root(m), `n=${n} root(${m})`);
        assert.deepEqual(
          f.proveMember(i, m > i ? m : n).path,
          ref.inclusionProof(i, m > i ? m : n).map(toWireNode),
        );
        assert.deepEqual(
          f.proveConsistency(m).path,
          ref.consistencyProof(m, n).map(toWireNode),
          `n=${n} m=${m}`,
        );
      }
    }),
    { numRuns: 60 },
  );
});

test("a receipt is signed by the host and binds size, root, total and span", () => {
  const items = makeItems(9);
  const f = buildFleet(items);
  const env = signFleetReceipt(f, host, span);
  const r = openFleetReceipt(env, [host.did]);
  assert.equal(r.size, 9);
  assert.equal(r.root, formatDigest(refMTH(items).hash));
  assert.equal(r.total_uj, refMTH(items).sum.toString());
  assert.deepEqual([r.start_ms, r.end_ms], [span.start_ms, span.end_ms]);
  assert.throws(
    () => openFleetReceipt(env, [testKey("mallory").did]),
    (e: unknown) => (e as { code?: string }).code === "UnknownSigner",
  );
  const byOther = signPayload(FLEET_RECEIPT_TYPE, fleetReceipt(f, host.did, span), testKey("mallory"));
  assert.throws(
    () => openFleetReceipt(byOther),
    (e) => isSandboxAttestError(e, "BadFleetReceipt"),
  );
});

test("items are checked: shape, duplicates, and the 2^64 − 1 energy bound", () => {
  const [a, b] = makeItems(2) as [FleetItem, FleetItem];
  const f = new Fleet();
  f.append(a);
  assert.throws(
    () => f.append(a),
    (e) => isSandboxAttestError(e, "DuplicateFleetItem"),
  );
  for (const broken of [
    { ...b, extra: 1 },
    { ...b, item: "-x" },
    { ...b, head: "sha256:00" },
    { ...b, energy_uj: "01" },
    { ...b, outcome: "running" },
    { ...b, item: 'a"b' },
  ])
    assert.throws(
      () => f.append(broken),
      (e) => isSandboxAttestError(e, "BadFleetItem"),
      JSON.stringify(broken),
    );
  f.append({ ...b, energy_uj: ((1n << 64n) - 1n - parseAmount(a.energy_uj)).toString() });
  assert.throws(
    () => f.append({ ...b, item: "c", energy_uj: "1" }),
    (e) => isSandboxAttestError(e, "EnergyOverflow"),
  );
  assert.equal(f.size, 2);
  // Refusals in order: shape before duplicate, duplicate before overflow.
  assert.throws(
    () => f.append({ ...a, head: "blake3:00" }),
    (e) => isSandboxAttestError(e, "BadFleetItem"),
  );
  assert.throws(
    () => f.append({ ...a, energy_uj: "1" }),
    (e) => isSandboxAttestError(e, "DuplicateFleetItem"),
  );
  // The refused item added nothing, its id included.
  f.append({ ...b, item: "c", energy_uj: "0" });
  assert.equal(f.indexOf("c"), 2);
  assert.equal(f.root().sum, (1n << 64n) - 1n);
  assert.throws(
    () => fleetReceipt(f, host.did, { ...span, end_ms: span.start_ms - 1 }),
    (e) => isSandboxAttestError(e, "BadFleetReceipt"),
  );
});
