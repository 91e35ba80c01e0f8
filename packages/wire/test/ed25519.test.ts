// RFC 8032 §7.1 tests 1–3 and the non-canonical S case, through both backends; did:key; test keys.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  base58btcDecode,
  base58btcEncode,
  didKeyFromPublicKey,
  ed25519,
  ed25519Refusal,
  fromHex,
  keyPairFromSeed,
  nobleBackend,
  publicKeyFromDidKey,
  testKey,
  toHex,
  verifyEd25519,
  WireError,
} from "@sbx/wire";
import { readExternal } from "./shared.ts";

interface Case {
  id: string;
  secret_seed?: string;
  public_key: string;
  message: string;
  signature: string;
  expect: "valid" | "invalid";
}
const { cases } = readExternal("ed25519/rfc8032.json") as { cases: Case[] };

for (const backend of [ed25519, nobleBackend]) {
  test(`RFC 8032 vectors through ${backend.name}`, () => {
    assert.equal(cases.filter((c) => c.expect === "valid").length, 3);
    for (const c of cases) {
      const pk = fromHex(c.public_key);
      const msg = fromHex(c.message);
      const sig = fromHex(c.signature);
      if (c.secret_seed !== undefined) {
        const seed = fromHex(c.secret_seed);
        assert.equal(toHex(backend.publicKey(seed)), c.public_key, c.id);
        assert.equal(toHex(backend.sign(seed, msg)), c.signature, `${c.id} sign`);
      }
      assert.equal(backend.verify(pk, msg, sig), c.expect === "valid", `${c.id} backend verify`);
      assert.equal(verifyEd25519(pk, msg, sig), c.expect === "valid", `${c.id} verifyEd25519`);
      assert.equal(
        ed25519Refusal(pk, msg, sig, backend) ?? "ok",
        c.expect === "valid" ? "ok" : "NonCanonicalS",
        c.id,
      );
    }
  });
}

test("verifyEd25519 refuses wrong lengths", () => {
  const c = cases[0]!;
  assert.equal(verifyEd25519(fromHex(c.public_key).slice(1), new Uint8Array(0), fromHex(c.signature)), false);
  assert.equal(verifyEd25519(fromHex(c.public_key), new Uint8Array(0), fromHex(c.signature).slice(1)), false);
});

test("did:key round trip and known form", () => {
  const k = keyPairFromSeed(fromHex(cases[0]!.secret_seed ?? ""));
  assert.match(k.did, /^did:key:z6Mk/);
  assert.deepEqual(publicKeyFromDidKey(k.did), k.publicKey);
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (seed) => {
      const pk = keyPairFromSeed(seed).publicKey;
      assert.deepEqual(publicKeyFromDidKey(didKeyFromPublicKey(pk)), pk);
    }),
  );
});

test("did:key refusals are BadDidKey", () => {
  for (const bad of [
    "did:web:x",
    "did:key:m123",
    "did:key:z0OIl",
    42,
    "did:key:z" + base58btcEncode(new Uint8Array(34)),
  ]) {
    assert.throws(
      () => publicKeyFromDidKey(bad),
      (e: unknown) => e instanceof WireError && e.code === "BadDidKey",
      String(bad),
    );
  }
});

test("base58btc keeps leading zero bytes", () => {
  const b = Uint8Array.from([0, 0, 1, 2, 255]);
  assert.deepEqual(base58btcDecode(base58btcEncode(b)), b);
  assert.equal(base58btcDecode("0"), null);
});

test("test keys are fixed by name (§2.10)", () => {
  assert.equal(testKey("steward").did, testKey("steward").did);
  assert.notEqual(testKey("steward").did, testKey("host").did);
  // Pinned: any implementation deriving BLAKE3("sandbox-attest.testkey/1:steward") gets this did.
  assert.equal(testKey("steward").did, "did:key:z6Mkf91F3a17wweTFNDAg9JNawcNgCyR1TR3YmUNxxN4bs7y");
});
