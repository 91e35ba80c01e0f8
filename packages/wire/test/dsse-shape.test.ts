// DSSE envelopes (§2.4): each shape rule, boundary and helper on its own, so that a check removed
// or loosened fails here (the mutants `npm run mutate -- wire/dsse` left alive).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  assertEnvelopeShape,
  canonicalBytes,
  envelopeAddress,
  addressOf,
  openEnvelope,
  pae,
  payloadOf,
  samePayload,
  signBytes,
  signPayload,
  testKey,
  toBase64,
  WireError,
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

/** sealRaw signs arbitrary payload bytes (not necessarily a canonical object) as an envelope. */
function sealRaw(body: Uint8Array): Envelope {
  const sig = toBase64(signBytes(steward, pae(T, body)));
  return { payloadType: T, payload: toBase64(body), signatures: [{ keyid: steward.did, sig }] };
}

test("signPayload refuses an empty key list", () => {
  assert.throws(() => signPayload(T, { a: 1 }, []), RangeError);
});

test("envelope shape: every member's type and the signature list's bounds", () => {
  const e = signPayload(T, { a: 1 }, steward);
  const s0 = e.signatures[0]!;
  const bad: unknown[] = [
    null,
    undefined,
    [],
    "envelope",
    { ...e, extra: 1 },
    { ...e, payloadType: 7 },
    { ...e, payload: 7 },
    { ...e, signatures: {} },
    { ...e, signatures: Array.from({ length: 17 }, () => s0) },
    { ...e, signatures: [null] },
    { ...e, signatures: [undefined] },
    { ...e, signatures: ["sig"] },
    { ...e, signatures: [{ keyid: 7, sig: s0.sig }] },
    { ...e, signatures: [{ keyid: s0.keyid, sig: 7 }] },
    { ...e, signatures: [{ keyid: s0.keyid }] },
    { ...e, signatures: [{ ...s0, sig: s0.sig.replace(/=+$/, "") }] },
  ];
  bad.forEach((env, i) => {
    assert.equal(
      code(() => openEnvelope(env, { payloadType: T })),
      "BadEnvelope",
      `case ${i}`,
    );
  });
  // assertEnvelopeShape alone, without the later base64 and signature checks to catch the rest.
  [
    { ...e, payload: 7 },
    { ...e, signatures: [{ keyid: s0.keyid, sig: 7 }] },
  ].forEach((env, i) => {
    assert.equal(
      code(() => {
        assertEnvelopeShape(env);
      }),
      "BadEnvelope",
      `shape case ${i}`,
    );
  });
});

test("base64 must be canonical: nonzero padding bits decode but are BadEnvelope", () => {
  const e = sealRaw(new TextEncoder().encode('{"a":1}'));
  assert.equal(e.payload, "eyJhIjoxfQ==");
  assert.equal(
    code(() => openEnvelope({ ...e, payload: "eyJhIjoxfR==" }, { payloadType: T })),
    "BadEnvelope",
  );
  const s0 = e.signatures[0]!;
  const last = s0.sig.at(-3)!;
  const sig = s0.sig.slice(0, -3) + String.fromCharCode(last.charCodeAt(0) ^ 1) + "==";
  assert.equal(
    code(() => openEnvelope({ ...e, signatures: [{ ...s0, sig }] }, { payloadType: T })),
    "BadEnvelope",
  );
});

test("a signature's members may come in either order; sixteen signatures are accepted", () => {
  const e = signPayload(T, { a: 1 }, steward);
  const s0 = e.signatures[0]!;
  const swapped = { ...e, signatures: [{ sig: s0.sig, keyid: s0.keyid }] };
  assert.deepEqual(openEnvelope(swapped, { payloadType: T }).signers, [steward.did]);
  const keys = Array.from({ length: 16 }, (_, i) => testKey(`signer-${i}`));
  const many = signPayload(T, { a: 1 }, keys);
  assert.equal(openEnvelope(many, { payloadType: T }).signers.length, 16);
});

test("payload size: exactly maxBytes is accepted, one more is OversizeInput", () => {
  const e = signPayload(T, { a: 1 }, steward);
  const n = canonicalBytes({ a: 1 }).length;
  assert.equal(
    code(() => openEnvelope(e, { payloadType: T, maxBytes: n })),
    "ok",
  );
  assert.equal(
    code(() => openEnvelope(e, { payloadType: T, maxBytes: n - 1 })),
    "OversizeInput",
  );
});

test("payload size is checked before the signatures: an oversize payload with a bad signature is OversizeInput", () => {
  const e = signPayload(T, { a: 1 }, steward);
  const forged = { ...e, signatures: [{ keyid: other.did, sig: e.signatures[0]!.sig }] };
  const n = canonicalBytes({ a: 1 }).length;
  assert.equal(
    code(() => openEnvelope(forged, { payloadType: T })),
    "BadSignature",
  );
  assert.equal(
    code(() => openEnvelope(forged, { payloadType: T, maxBytes: n - 1 })),
    "OversizeInput",
  );
});

test("a payload above the parser's default size opens when maxBytes allows it", () => {
  const big = { s: "x".repeat(17 * 1024 * 1024) };
  const e = signPayload(T, big, steward);
  const opened = openEnvelope(e, { payloadType: T, maxBytes: 18 * 1024 * 1024 });
  assert.equal((opened.payload as { s: string }).s.length, big.s.length);
});

test("signers: one listed signer among several is enough", () => {
  const e = signPayload(T, { a: 1 }, [steward, other]);
  assert.deepEqual(openEnvelope(e, { payloadType: T, signers: [other.did] }).signers, [
    steward.did,
    other.did,
  ]);
  assert.equal(
    code(() => openEnvelope(e, { payloadType: T, signers: [testKey("x").did] })),
    "UnknownSigner",
  );
});

test("the payload must be a JSON object: null, an array, a number and a string are BadEnvelope", () => {
  for (const body of ["null", "[1]", "5", '"s"']) {
    const env = sealRaw(new TextEncoder().encode(body));
    assert.equal(
      code(() => openEnvelope(env, { payloadType: T })),
      "BadEnvelope",
      body,
    );
  }
});

test("envelopeAddress, samePayload and payloadOf read the payload bytes and refuse bad base64", () => {
  const a = signPayload(T, { a: 1 }, steward);
  const b = signPayload(T, { a: 1 }, other);
  const c = signPayload(T, { a: 2 }, steward);
  assert.equal(envelopeAddress(a), addressOf({ a: 1 }));
  assert.equal(samePayload(a, b), true);
  assert.equal(samePayload(a, c), false);
  assert.deepEqual({ ...(payloadOf(c) as object) }, { a: 2 });
  const broken = { ...a, payload: "YQ" };
  assert.equal(
    code(() => envelopeAddress(broken)),
    "BadEnvelope",
  );
  assert.equal(
    code(() => samePayload(a, broken)),
    "BadEnvelope",
  );
  assert.equal(
    code(() => samePayload(broken, a)),
    "BadEnvelope",
  );
  assert.equal(
    code(() => payloadOf(broken)),
    "BadEnvelope",
  );
  assert.equal(
    code(() => envelopeAddress({ ...a, payload: 7 } as unknown as Envelope)),
    "BadEnvelope",
  );
});
