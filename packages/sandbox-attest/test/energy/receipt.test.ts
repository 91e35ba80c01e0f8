// §6.1/§6.2 receipts: sign and verify, provenance rules, total = exact sum, and single-field mutations refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { signPayload, testKey, fromBase64, toBase64, type Envelope } from "@sbx/wire";
import {
  ENERGY_RECEIPT_TYPE,
  assertComponent,
  buildReceipt,
  figureOf,
  openReceipt,
  signReceipt,
  startEnergyChain,
  type EnergyReceipt,
} from "@sbx/sandbox-attest/energy";
import { GRANTS, HOST, MALLORY, UNIT, arbComponent, hasCode, mutable, sampleComponents } from "./fixtures.ts";

function receiptOf(components = sampleComponents(), absent = ["rapl"]): EnergyReceipt {
  const s = startEnergyChain(UNIT, GRANTS);
  return buildReceipt({
    unit_id: UNIT,
    grants_id: GRANTS,
    seq: 0,
    prev: s.head,
    host: HOST.did,
    start_ms: 1_000,
    end_ms: 2_000,
    components,
    absent,
  });
}
const resign = (payload: unknown, key = HOST): Envelope => signPayload(ENERGY_RECEIPT_TYPE, payload, key);

test("a signed receipt verifies and its address is its payload's", () => {
  const r = receiptOf();
  const opened = openReceipt(signReceipt(r, HOST), { hosts: [HOST.did] });
  assert.deepEqual(mutable(opened.receipt), mutable(r));
  assert.equal(r.total_uj, String(1_000n + 22_500_000n + BigInt(figureOf([r.components[2]!]).uj)));
  assert.deepEqual(figureOf(r.components).provenance, "estimated");
});

test("signature by the wrong key, an unnamed host, a relabelled host and a wrong type are refused", () => {
  const r = receiptOf();
  assert.throws(() => openReceipt(resign(r, MALLORY)), hasCode("ReceiptNotByHost"));
  assert.throws(() => openReceipt(signReceipt(r, HOST), { hosts: [MALLORY.did] }), hasCode("UnknownSigner"));
  const env = signReceipt(r, HOST);
  assert.throws(
    () => openReceipt({ ...env, signatures: [{ ...env.signatures[0]!, keyid: MALLORY.did }] }),
    hasCode("BadSignature"),
  );
  assert.throws(() => openReceipt({ ...env, payloadType: "application/json" }), hasCode("WrongPayloadType"));
  assert.throws(() => signReceipt(r, testKey("host-2")), RangeError);
});

test("provenance rules: estimated without coefficients, attributed without ratio, ratio above 1", () => {
  const [m, a, e] = sampleComponents().map(mutable) as [
    Record<string, unknown>,
    Record<string, unknown>,
    Record<string, unknown>,
  ];
  const cases: [string, unknown][] = [
    ["BadProvenance", { ...e, model: undefined }],
    ["BadProvenance", { ...e, model: { ...(e.model as object), coefficients: undefined } }],
    ["BadProvenance", { ...a, ratio: undefined }],
    ["BadProvenance", { ...a, shared_uj: undefined }],
    ["BadProvenance", { ...m, ratio: a.ratio }],
    ["BadProvenance", { ...m, provenance: "guessed" }],
    ["BadProvenance", { ...a, model: e.model }],
    ["RatioAboveOne", { ...a, ratio: { ...(a.ratio as object), numerator: "101" } }],
    ["BadRatio", { ...a, ratio: { ...(a.ratio as object), denominator: "0", numerator: "0" } }],
    ["BadRatio", { ...a, ratio: { numerator: "1", denominator: "2" } }],
    ["AttributionMismatch", { ...a, uj: "22500001" }],
    ["EstimateMismatch", { ...e, uj: "1" }],
    ["UnknownModel", { ...e, model: { ...(e.model as object), name: "watts-guess/1" } }],
    ["BadComponent", { ...m, domain: "network" }],
    ["BadComponent", { ...m, source: "" }],
    ["BadComponent", { ...m, extra: 1 }],
    ["BadComponent", { ...m, ref: "sha256:00" }],
    ["BadAmount", { ...m, uj: 5 }],
  ];
  for (const [i, [c, comp]] of cases.entries()) {
    const clean = JSON.parse(JSON.stringify(comp)) as unknown;
    assert.throws(() => assertComponent(clean), hasCode(c), `case ${i}`);
    assert.throws(
      () => openReceipt(resign({ ...mutable(receiptOf()), components: [clean] })),
      hasCode(c),
      `case ${i}`,
    );
  }
});

test("receipt shape: interval, absent list, members", () => {
  const r = mutable(receiptOf());
  const bad: [string, Record<string, unknown>][] = [
    ["EnergyBadInterval", { ...r, end_ms: 999 }],
    ["BadEnergyReceipt", { ...r, absent: ["rapl", "rapl"] }],
    ["BadEnergyReceipt", { ...r, absent: ["z", "a"] }],
    ["BadEnergyReceipt", { ...r, seq: -1 }],
    ["BadEnergyReceipt", { ...r, host: "did:web:x" }],
    ["BadEnergyReceipt", { ...r, unit_id: "blake3:00" }],
    ["BadEnergyReceipt", { ...r, note: "x" }],
    ["EnergyTotalMismatch", { ...r, total_uj: "0" }],
  ];
  for (const [i, [c, p]] of bad.entries())
    assert.throws(() => openReceipt(resign(p)), hasCode(c), `case ${i}`);
});

test("property: total_uj always equals the exact sum of the components", () => {
  fc.assert(
    fc.property(fc.array(arbComponent, { maxLength: 12 }), (cs) => {
      const r = receiptOf(cs, []);
      const sum = cs.reduce((s, c) => s + BigInt(c.uj), 0n);
      assert.equal(r.total_uj, sum.toString());
      assert.deepEqual(mutable(openReceipt(signReceipt(r, HOST)).receipt), mutable(r));
    }),
    { numRuns: 60 },
  );
});

/** Every leaf path of a JSON value. */
function leaves(v: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof v !== "object" || v === null) return [path];
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
  return entries.flatMap(([k, x]) => leaves(x, [...path, k]));
}
function setAt(root: Record<string, unknown>, path: (string | number)[], f: (x: unknown) => unknown): void {
  let o = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  o[last] = f(o[last]);
}
const change = (x: unknown): unknown =>
  typeof x === "number"
    ? x + 1
    : typeof x === "string"
      ? x === "0"
        ? "1"
        : x.slice(0, -1) + (x.endsWith("1") ? "2" : "1")
      : "x";

test("property: any single-field change of a signed receipt is refused; re-signed figure changes too", () => {
  fc.assert(
    fc.property(fc.array(arbComponent, { minLength: 1, maxLength: 6 }), fc.nat(), (cs, pick) => {
      const r = receiptOf(cs, ["rapl"]);
      const env = signReceipt(r, HOST);
      const paths = leaves(r);
      const path = paths[pick % paths.length]!;
      const p = mutable(r);
      setAt(p, path, change);
      // Keeping the signature: the changed payload bytes no longer verify.
      const forged = { ...env, payload: toBase64(new TextEncoder().encode(JSON.stringify(p))) };
      assert.notEqual(forged.payload, env.payload);
      assert.throws(() => openReceipt(forged), hasCode("BadSignature"));
      // Re-signed: a changed figure (uj of a component or the total) never verifies.
      const last = path[path.length - 1];
      if (last === "uj" || last === "total_uj") assert.throws(() => openReceipt(resign(p)));
    }),
    { numRuns: 150 },
  );
  assert.ok(fromBase64(signReceipt(receiptOf(), HOST).payload));
});
