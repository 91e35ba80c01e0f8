// DSSE envelopes: sign, open, and every refusal by code.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  envelopeAddress,
  addressOf,
  openEnvelope,
  pae,
  signPayload,
  testKey,
  utf8,
  WireError,
  fromUtf8,
  type Envelope,
} from "@sbx/wire";

const T = "application/vnd.sandbox-attest.test+json";
const steward = testKey("steward");
const other = testKey("mallory");

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof WireError, String(e));
    return e.code;
  }
  return "ok";
}

test("PAE matches the DSSE definition", () => {
  assert.equal(
    fromUtf8(pae("http://example.com/HelloWorld", utf8("hello world"))),
    "DSSEv1 29 http://example.com/HelloWorld 11 hello world",
  );
});

test("sign then open; the address is the payload's, whoever signs", () => {
  const v = { b: [1, 2], a: "x" };
  const e1 = signPayload(T, v, steward);
  const e2 = signPayload(T, v, [steward, other]);
  const o = openEnvelope(e1, { payloadType: T, signers: [steward.did] });
  assert.equal(o.address, addressOf(v));
  assert.equal(envelopeAddress(e2), o.address);
  assert.deepEqual(openEnvelope(e2, { payloadType: T }).signers, [steward.did, other.did]);
});

test("refusals", () => {
  const e = signPayload(T, { a: 1 }, steward);
  const s0 = e.signatures[0]!;
  const cases: [unknown, string, string[]?][] = [
    [{ ...e, payloadType: "x" }, "BadSignature"],
    [e, "UnknownSigner", [other.did]],
    [{ ...e, signatures: [{ keyid: other.did, sig: s0.sig }] }, "BadSignature"],
    [{ ...e, signatures: [{ keyid: "did:web:x", sig: s0.sig }] }, "BadDidKey"],
    [{ ...e, signatures: [] }, "BadEnvelope"],
    [{ ...e, signatures: [{ ...s0, extra: 1 }] }, "BadEnvelope"],
    [{ payload: e.payload, signatures: e.signatures }, "BadEnvelope"],
    [null, "BadEnvelope"],
    [{ ...e, payload: e.payload + "=" }, "BadEnvelope"],
  ];
  cases.forEach(([env, want, signers], i) => {
    const got = code(() =>
      openEnvelope(env, {
        payloadType: (env as Envelope | null)?.payloadType === "x" ? "x" : T,
        ...(signers ? { signers } : {}),
      }),
    );
    assert.equal(got, want, `case ${i}`);
  });
  assert.equal(
    code(() => openEnvelope(e, { payloadType: "other" })),
    "WrongPayloadType",
  );
  assert.equal(
    code(() => openEnvelope(e, { payloadType: T, maxBytes: 3 })),
    "OversizeInput",
  );
});
