// §7.6 Interoperability: an attestation this implementation signs is verified by sigstore-js
// (@sigstore/verify, an independent DSSE implementation), read as a Sigstore bundle v0.3 whose
// verification material is a public-key hint, with no transparency log, certificate or timestamp
// required (thresholds 0). A tampered or wrongly signed one is refused by it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { bundleFromJSON, type SerializedBundle } from "@sigstore/bundle";
import { Verifier, toSignedEntity, toTrustMaterial, VerificationError } from "@sigstore/verify";
import { concatBytes, fromHex, signPayload, testKey, type Envelope, type KeyPair } from "@sbx/wire";
import { ATTESTATION_PAYLOAD_TYPE, buildStatement } from "../../src/attestation/index.ts";
import { attest, d, fixturePredicate, host, unitOf } from "./fixture.ts";

// RFC 8410: the SubjectPublicKeyInfo DER of an Ed25519 key is this prefix and the 32 key bytes.
const ED25519_SPKI_PREFIX = fromHex("302a300506032b6570032100");

/** toBundle wraps our DSSE envelope in a Sigstore bundle v0.3 with a public-key hint. */
function toBundle(env: Envelope, hint: string): SerializedBundle {
  return {
    mediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
    verificationMaterial: {
      publicKey: { hint },
      tlogEntries: [],
      timestampVerificationData: { rfc3161Timestamps: [] },
    },
    dsseEnvelope: {
      payload: env.payload,
      payloadType: env.payloadType,
      signatures: env.signatures.map((s) => ({ sig: s.sig, keyid: s.keyid })),
    },
  } as unknown as SerializedBundle;
}

/** sigstoreVerify verifies `env` with sigstore-js, trusting only `trusted` under the hint `hint`. */
function sigstoreVerify(env: Envelope, trusted: KeyPair, hint = trusted.did): void {
  const root = { certificateAuthorities: [], timestampAuthorities: [], tlogs: [], ctlogs: [] };
  const keys = {
    [trusted.did]: { rawBytes: Buffer.from(concatBytes(ED25519_SPKI_PREFIX, trusted.publicKey)) },
  };
  const trust = toTrustMaterial(
    root as unknown as Parameters<typeof toTrustMaterial>[0],
    keys as unknown as Parameters<typeof toTrustMaterial>[1],
  );
  const verifier = new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 });
  verifier.verify(toSignedEntity(bundleFromJSON(toBundle(env, hint))));
}

const refusedBySigstore = (e: unknown) => e instanceof VerificationError && e.code === "SIGNATURE_ERROR";

test("sigstore-js verifies an attestation signed by this implementation", () => {
  const env = attest(fixturePredicate(), host);
  assert.equal(env.payloadType, "application/vnd.in-toto+json");
  sigstoreVerify(env, host);
  // The payload it verified is our in-toto statement, read with plain JSON.
  const stmt = JSON.parse(Buffer.from(env.payload, "base64").toString("utf8")) as {
    _type: string;
    predicate: { host: string };
  };
  assert.equal(stmt._type, "https://in-toto.io/Statement/v1");
  assert.equal(stmt.predicate.host, host.did);
});

test("sigstore-js refuses a tampered attestation", () => {
  const env = attest(fixturePredicate(), host);
  const text = Buffer.from(env.payload, "base64").toString("utf8").replace('"exit_code":0', '"exit_code":1');
  assert.notEqual(text, Buffer.from(env.payload, "base64").toString("utf8"));
  assert.throws(
    () => sigstoreVerify({ ...env, payload: Buffer.from(text).toString("base64") }, host),
    refusedBySigstore,
  );
  const sig = Buffer.from(env.signatures[0]!.sig, "base64");
  sig[5]! ^= 1;
  assert.throws(
    () => sigstoreVerify({ ...env, signatures: [{ keyid: host.did, sig: sig.toString("base64") }] }, host),
    refusedBySigstore,
  );
  assert.throws(() => sigstoreVerify({ ...env, payloadType: "application/json" }, host), refusedBySigstore);
});

test("sigstore-js refuses an attestation signed by another key than the trusted host", () => {
  const mallory = testKey("mallory");
  const forged = signPayload(
    ATTESTATION_PAYLOAD_TYPE,
    buildStatement({ ...fixturePredicate(), host: host.did }, unitOf(d("unit"))),
    mallory,
  );
  assert.throws(() => sigstoreVerify(forged, host), refusedBySigstore);
});
