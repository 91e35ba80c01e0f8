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
import { sha512 } from "@noble/hashes/sha2.js";
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

// The rule of §2.4 restated literally: RFC 8032 §5.1.3 decoding in field arithmetic, order by
// multiplying by 8, the equation by double-and-add. Slow, and shares nothing with src but noble's
// point addition.
const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const D = (-121665n * inverse(121666n)) % P;
const SQRT_M1 = pow(2n, (P - 1n) / 4n);
function pow(b: bigint, e: bigint): bigint {
  let r = 1n;
  for (let x = ((b % P) + P) % P, n = e; n > 0n; n >>= 1n, x = (x * x) % P) if (n & 1n) r = (r * x) % P;
  return r;
}
function inverse(x: bigint): bigint {
  return pow(x, P - 2n);
}
function le(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}
type Pt = InstanceType<typeof noble.Point>;
function decode(b: Uint8Array): Pt | null {
  const y = le(b) & ((1n << 255n) - 1n);
  const sign = le(b) >> 255n;
  if (b.length !== 32 || y >= P) return null;
  const x2 = (((((y * y - 1n) % P) + P) % P) * inverse((D * y * y + 1n) % P)) % P;
  let x = pow(x2, (P + 3n) / 8n);
  if ((x * x) % P !== x2) x = (x * SQRT_M1) % P;
  if ((x * x) % P !== x2) return null;
  if (x === 0n && sign === 1n) return null;
  if ((x & 1n) !== sign) x = P - x;
  return noble.Point.fromAffine({ x, y });
}
function times(p: Pt, n: bigint): Pt {
  let acc = noble.Point.ZERO;
  for (let q = p, m = n; m > 0n; m >>= 1n, q = q.double()) if (m & 1n) acc = acc.add(q);
  return acc;
}
function literalRule(a: Uint8Array, m: Uint8Array, sig: Uint8Array): string {
  const A = decode(a);
  if (!A) return "NonCanonicalKey";
  if (times(A, 8n).is0()) return "SmallOrderKey";
  if (sig.length !== 64) return "BadSignature";
  const R = decode(sig.subarray(0, 32));
  if (!R) return "NonCanonicalR";
  if (times(R, 8n).is0()) return "SmallOrderR";
  const S = le(sig.subarray(32));
  if (S >= L) return "NonCanonicalS";
  const k = le(sha512(Uint8Array.from([...sig.subarray(0, 32), ...a, ...m]))) % L;
  return times(noble.Point.BASE, S).equals(R.add(times(A, k))) ? "ok" : "BadSignature";
}

test("ed25519Refusal equals a literal restatement of the rule, on both backends", () => {
  for (const [n, v] of vectors.entries()) {
    const [a, m, s] = [fromHex(v.input.public_key), fromHex(v.input.message), fromHex(v.input.signature)];
    assert.equal(literalRule(a, m, s), v.expect === "ok" ? "ok" : v.expect.error, `#${n} ${v.id} literal`);
  }
  const k = keyPairFromSeed(new Uint8Array(32).fill(9));
  const msg = Uint8Array.of(1, 2, 3);
  const good = ed25519.sign(k.seed, msg);
  const torsion = [...SMALL_ORDER_ENCODINGS].map(fromHex);
  const point = fc.oneof(
    fc.constant(k.publicKey),
    fc.constantFrom(...torsion),
    fc.uint8Array({ minLength: 32, maxLength: 32 }),
    fc
      .uint8Array({ minLength: 32, maxLength: 32 })
      .map((b) => b.map((x, i) => (i === 0 ? 0xe0 | (x & 31) : i === 31 ? 0x7f | (x & 0x80) : 0xff))),
  );
  const r = fc.oneof(fc.constant(good.subarray(0, 32)), point);
  const sScalar = fc.oneof(
    fc.constant(good.subarray(32)),
    fc.constant(
      Uint8Array.from(
        Buffer.from((le(good.subarray(32)) + L).toString(16).padStart(64, "0"), "hex").reverse(),
      ),
    ),
    fc.uint8Array({ minLength: 32, maxLength: 32 }),
  );
  fc.assert(
    fc.property(point, r, sScalar, (a, rb, sb) => {
      const sig = Uint8Array.from([...rb, ...sb]);
      const want = literalRule(a, msg, sig);
      for (const b of backends) assert.equal(verdict(b, a, msg, sig), want, b.name);
    }),
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
