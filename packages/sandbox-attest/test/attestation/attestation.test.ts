import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  canonicalBytes,
  digestBytes,
  isWireError,
  pae,
  signBytes,
  signPayload,
  testKey,
  toBase64,
  utf8,
  type Envelope,
} from "@sbx/wire";
import {
  ATTESTATION_PAYLOAD_TYPE,
  attestationAddress,
  buildStatement,
  verifyAttestation,
  type AttestationExpect,
} from "../../src/attestation/index.ts";
import { isSandboxAttestError } from "../../src/errors.ts";
import { attest, d, fixturePredicate, host, unitOf } from "./fixture.ts";

/** sha256Of is the SHA-256 of a value's canonical bytes, by node:crypto (not the code under test). */
const sha256Of = (v: unknown): string => createHash("sha256").update(canonicalBytes(v)).digest("hex");

const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
const payload = (env: Envelope): Record<string, unknown> =>
  JSON.parse(Buffer.from(env.payload, "base64").toString()) as Record<string, unknown>;

test("a signed attestation verifies with every binding given", () => {
  const env = attest(fixturePredicate({ run_head: d("head") }), host);
  const p = fixturePredicate();
  const all: AttestationExpect = {
    host: host.did,
    unitId: p.unit_id,
    grantsId: p.grants_id,
    manifest: p.manifest,
    policy: p.exec_policy,
    receipt: p.energy.receipt,
    totalUj: "1250000",
    journalRoot: p.journal.root,
    journalEvents: 7,
    runHead: d("head"),
    auditPrev: null,
    unit: unitOf(p.unit_id),
  };
  const v = verifyAttestation(env, all);
  assert.equal(v.address, attestationAddress(env));
  assert.equal(v.statement._type, "https://in-toto.io/Statement/v1");
  assert.equal(
    JSON.stringify(v.statement.subject),
    JSON.stringify([
      { digest: { blake3: p.unit_id.slice(7), sha256: sha256Of(unitOf(p.unit_id)) }, name: "unit" },
    ]),
  );
  assert.equal(env.payloadType, ATTESTATION_PAYLOAD_TYPE);
});

test("each binding mismatch has its own code", () => {
  const env = attest(fixturePredicate(), host);
  const cases: [AttestationExpect, string][] = [
    [{ host: testKey("host-2").did }, "HostMismatch"],
    [{ unitId: d("x") }, "UnitMismatch"],
    [{ grantsId: d("x") }, "GrantsMismatch"],
    [{ manifest: d("x") }, "ManifestMismatch"],
    [{ policy: d("x") }, "PolicyMismatch"],
    [{ receipt: d("x") }, "ReceiptMismatch"],
    [{ totalUj: "1" }, "ReceiptMismatch"],
    [{ journalRoot: d("x") }, "JournalMismatch"],
    [{ journalEvents: 8 }, "JournalMismatch"],
    [{ runHead: d("x") }, "RunHeadMismatch"],
    [{ auditPrev: d("x") }, "AuditPrevMismatch"],
  ];
  for (const [i, [x, c]] of cases.entries())
    assert.throws(() => verifyAttestation(env, x), code(c), `case ${i}`);
});

test("signature by another key than the predicate's host is refused", () => {
  const stmt = buildStatement({ ...fixturePredicate(), host: host.did }, unitOf(d("unit")));
  const env = signPayload(ATTESTATION_PAYLOAD_TYPE, stmt, testKey("mallory"));
  assert.throws(() => verifyAttestation(env), code("SignerNotHost"));
  const relabelled = { ...env, signatures: [{ keyid: host.did, sig: env.signatures[0]!.sig }] };
  assert.throws(
    () => verifyAttestation(relabelled),
    (e) => isWireError(e, "BadSignature"),
  );
});

test("a flipped payload bit is refused before anything is parsed", () => {
  const env = attest(fixturePredicate(), host);
  const b = Buffer.from(env.payload, "base64");
  b[40]! ^= 1;
  assert.throws(
    () => verifyAttestation({ ...env, payload: b.toString("base64") }),
    (e) => isWireError(e, "BadSignature"),
  );
});

test("strict shape: unknown members, bad statement and bad predicate values are refused", () => {
  const good = payload(attest(fixturePredicate(), host));
  const pred = good.predicate as Record<string, unknown>;
  const sign = (v: unknown) => signPayload(ATTESTATION_PAYLOAD_TYPE, v, host);
  assert.throws(() => verifyAttestation(sign({ ...good, extra: 1 })), code("BadStatement"));
  assert.throws(
    () => verifyAttestation(sign({ ...good, _type: "https://in-toto.io/Statement/v0.1" })),
    code("BadStatement"),
  );
  assert.throws(() => verifyAttestation(sign({ ...good, subject: [] })), code("BadStatement"));
  assert.throws(
    () =>
      verifyAttestation(
        sign({
          ...good,
          subject: [{ name: "unit", digest: { blake3: d("y").slice(7), sha256: sha256Of(unitOf(d("y"))) } }],
        }),
      ),
    code("SubjectMismatch"),
  );
  const badPreds: Record<string, unknown>[] = [
    { ...pred, extra: 1 },
    { ...pred, level: "S9" },
    { ...pred, interval: { start_ms: 2, end_ms: 1 } },
    { ...pred, outcome: { status: "exited", exit_code: 0, signal: "SIGKILL" } },
    { ...pred, outcome: { status: "signaled", signal: "kill" } },
    { ...pred, energy: { receipt: d("r"), total_uj: 5, provenance: "measured" } },
    { ...pred, energy: { receipt: d("r"), total_uj: "5", provenance: "guessed" } },
    { ...pred, audit_prev: d("p") },
    { ...pred, journal: { root: d("j"), events: -1 } },
    { ...pred, host: "did:web:example.com" },
  ];
  for (const [i, p] of badPreds.entries())
    assert.throws(
      () => verifyAttestation(sign({ ...good, predicate: p })),
      code("BadPredicate"),
      `case ${i}`,
    );
});

test("a validly signed but non-canonical payload is refused", () => {
  const text = JSON.stringify(payload(attest(fixturePredicate(), host)), null, 1);
  const env = signPayload(ATTESTATION_PAYLOAD_TYPE, JSON.parse(text), host);
  assert.ok(verifyAttestation(env));
  const raw = utf8(text);
  const loose: Envelope = {
    payloadType: ATTESTATION_PAYLOAD_TYPE,
    payload: toBase64(raw),
    signatures: [{ keyid: host.did, sig: toBase64(signBytes(host, pae(ATTESTATION_PAYLOAD_TYPE, raw))) }],
  };
  assert.throws(
    () => verifyAttestation(loose),
    (e) => isWireError(e, "NotCanonical"),
  );
});

test("signAttestation refuses a malformed predicate", () => {
  assert.throws(
    () => attest(fixturePredicate({ level: "S9" as "S1" }), host),
    (e) => isSandboxAttestError(e, "BadPredicate"),
  );
});

test("§7.1/§7.6 subject: exactly blake3 and sha256 of the unit descriptor, nothing else", () => {
  const good = payload(attest(fixturePredicate(), host));
  const sign = (v: unknown) => signPayload(ATTESTATION_PAYLOAD_TYPE, v, host);
  const unit = unitOf(d("unit"));
  const blake3 = digestBytes(canonicalBytes(unit)).slice(7);
  const sha256 = sha256Of(unit);
  const subject = (s: unknown) => sign({ ...good, subject: [s] });
  assert.deepEqual(good.subject, [{ name: "unit", digest: { blake3, sha256 } }]);
  const bad: [unknown, string][] = [
    [{ name: "unit", digest: { blake3 } }, "BadStatement"],
    [{ name: "unit", digest: { sha256 } }, "BadStatement"],
    [{ name: "unit", digest: { blake3, sha256, sha512: sha256 + sha256 } }, "BadStatement"],
    [{ name: "unit", digest: { blake3, sha256: sha256.toUpperCase() } }, "BadStatement"],
    [{ name: "unit", digest: { blake3, sha256: sha256.slice(2) } }, "BadStatement"],
    [{ name: "unit", digest: { blake3, sha256 }, uri: "https://example.com/unit" }, "BadStatement"],
    [{ name: "unit", digest: { blake3, sha256 }, annotations: {} }, "BadStatement"],
  ];
  for (const [i, [s, c]] of bad.entries())
    assert.throws(() => verifyAttestation(subject(s)), code(c), `case ${i}`);
});

test("§7.5 the unit descriptor binding checks both digests", () => {
  const env = attest(fixturePredicate(), host);
  assert.ok(verifyAttestation(env, { unit: unitOf(d("unit")) }));
  assert.throws(() => verifyAttestation(env, { unit: unitOf(d("other")) }), code("UnitMismatch"));
  // A host that signs a wrong sha256 beside the right blake3: only the descriptor shows it.
  const good = payload(env);
  const lying = signPayload(
    ATTESTATION_PAYLOAD_TYPE,
    { ...good, subject: [{ name: "unit", digest: { blake3: d("unit").slice(7), sha256: sha256Of("x") } }] },
    host,
  );
  assert.ok(verifyAttestation(lying));
  assert.throws(() => verifyAttestation(lying, { unit: unitOf(d("unit")) }), code("SubjectMismatch"));
});

test("buildStatement refuses a unit descriptor that is not the predicate's unit_id", () => {
  assert.throws(
    () => buildStatement({ ...fixturePredicate(), host: host.did }, unitOf(d("other"))),
    (e) => isSandboxAttestError(e, "SubjectMismatch"),
  );
});
