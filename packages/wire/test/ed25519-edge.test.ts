// §2.4: one Ed25519 rule for every backend. Each edge class of the C1 vectors (built from first
// principles by the conformance generator, verdicts by the rule) gives the same code through
// node:crypto and through @noble/curves; random signatures and their corruptions agree too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { ed25519 as noble } from "@noble/curves/ed25519.js";
import {
  didKeyFromPublicKey,
  ed25519,
  ed25519Refusal,
  fromHex,
  isWireError,
  keyPairFromSeed,
  nobleBackend,
  publicKeyFromDidKey,
  publicKeyRefusal,
  SMALL_ORDER_ENCODINGS,
  toHex,
  type Ed25519Backend,
} from "@sbx/wire";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

interface VerifyVector {
  id: string;
  op: string;
  input: { public_key: string; message: string; signature: string };
  expect: "ok" | { error: string };
}
const vectors = (
  JSON.parse(readFileSync(resolve(root, "vectors/core.json"), "utf8")) as { vectors: VerifyVector[] }
).vectors.filter((v) => v.op === "ed25519.verify");

const backends: readonly Ed25519Backend[] = [ed25519, nobleBackend];
const verdict = (b: Ed25519Backend, pk: Uint8Array, m: Uint8Array, s: Uint8Array): string =>
  ed25519Refusal(pk, m, s, b) ?? "ok";

test("both backends are really under test", () => {
  assert.deepEqual(
    backends.map((b) => b.name),
    ["node:crypto", "@noble/curves"],
  );
});

test("every edge class of §2.4 is in the C1 vectors", () => {
  const ids = vectors.map((v) => v.id);
  for (const cls of [
    "small-order-a-",
    "small-order-r-",
    "noncanonical-a-",
    "noncanonical-r-",
    "mixed-order-a-valid",
    "mixed-order-a-cofactored-only",
    "s-plus-1l",
    "cofactored-only-",
  ])
    assert.ok(
      ids.some((id) => id.startsWith(`c1-ed25519-edge-${cls}`)),
      `no vector of class ${cls}`,
    );
});

for (const b of backends)
  test(`C1 Ed25519 vectors give the rule's verdict through ${b.name}`, () => {
    assert.ok(vectors.length >= 40, `only ${vectors.length} vectors`);
    for (const [n, v] of vectors.entries()) {
      const want = v.expect === "ok" ? "ok" : v.expect.error;
      const { public_key, message, signature } = v.input;
      assert.equal(
        verdict(b, fromHex(public_key), fromHex(message), fromHex(signature)),
        want,
        `#${n} ${v.id}`,
      );
    }
  });

test("the small-order encodings are the eight multiples of a point of order 8", () => {
  // Independent of the list in src: any y that decodes to a point outside the prime-order subgroup
  // gives, times L, a point of small order; one of order 8 generates all eight.
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  let t = noble.Point.ZERO;
  for (let y = 2n; t.multiplyUnsafe(4n).is0(); y++) {
    const b = fromHex(y.toString(16).padStart(2, "0") + "00".repeat(31));
    try {
      const p = noble.Point.fromBytes(b);
      t = p.multiplyUnsafe(L - 1n).add(p);
    } catch {
      continue;
    }
  }
  const got = new Set<string>();
  for (let i = 0, q = noble.Point.ZERO; i < 8; i++, q = q.add(t)) got.add(toHex(q.toBytes()));
  assert.deepEqual([...got].sort(), [...SMALL_ORDER_ENCODINGS].sort());
});

test("random signatures and corruptions: both backends give the same code", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.uint8Array({ maxLength: 64 }),
      fc.nat(511),
      (seed, msg, bit) => {
        const k = keyPairFromSeed(seed);
        const sig = ed25519.sign(seed, msg);
        assert.deepEqual(
          backends.map((b) => verdict(b, k.publicKey, msg, sig)),
          ["ok", "ok"],
        );
        const bad = sig.slice();
        bad[bit >> 3]! ^= 1 << (bit & 7);
        const codes = backends.map((b) => verdict(b, k.publicKey, msg, bad));
        assert.equal(codes[0], codes[1]);
        assert.notEqual(codes[0], "ok");
      },
    ),
    { numRuns: 60 },
  );
});

test("random keys and signatures: both backends give the same code", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.uint8Array({ minLength: 64, maxLength: 64 }),
      (pk, sig) => {
        const m = new Uint8Array(1);
        assert.equal(verdict(ed25519, pk, m, sig), verdict(nobleBackend, pk, m, sig));
      },
    ),
    { numRuns: 150 },
  );
});

test("did:key refuses exactly the keys §2.4 refuses", () => {
  for (const hex of SMALL_ORDER_ENCODINGS) {
    const pk = fromHex(hex);
    assert.equal(publicKeyRefusal(pk), "SmallOrderKey", hex);
    assert.throws(
      () => didKeyFromPublicKey(pk),
      (e: unknown) => isWireError(e, "BadDidKey"),
      hex,
    );
  }
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (pk) => {
      const why = publicKeyRefusal(pk);
      if (why === null) assert.deepEqual(publicKeyFromDidKey(didKeyFromPublicKey(pk)), pk);
      else
        assert.throws(
          () => didKeyFromPublicKey(pk),
          (e: unknown) => isWireError(e, "BadDidKey"),
        );
    }),
  );
});
