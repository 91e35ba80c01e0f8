// The edge classes of Ed25519 verification (sandbox-attest §2.4), built from first principles with
// @noble/curves point arithmetic. Each case is labelled with the verdict the rule of §2.4 gives
// (RFC 8032 §5.1.7, strict, cofactorless); the construction is checked here against both group
// equations, so a case claims only what its bytes really are. The code under test is never asked.
import { ed25519 } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";

type Point = InstanceType<typeof ed25519.Point>;
const Pt = ed25519.Point;
const B = Pt.BASE;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const P = 2n ** 255n - 19n;

/** One edge case: hex inputs of `ed25519.verify` and the verdict of §2.4 ("ok" or its code). */
export interface EdgeCase {
  readonly id: string;
  readonly desc: string;
  readonly public_key: string;
  readonly message: string;
  readonly signature: string;
  readonly expect: string; // "ok", or the code of the refusal
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const unhex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, "hex"));

function le(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}

function le32(n: bigint): Uint8Array {
  const b = new Uint8Array(32);
  for (let i = 0; i < 32; i++) b[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return b;
}

/** mul is plain double-and-add over any point and any non-negative integer (torsion included). */
function mul(p: Point, n: bigint): Point {
  let acc = Pt.ZERO;
  let q = p;
  for (let m = n; m > 0n; m >>= 1n) {
    if (m & 1n) acc = acc.add(q);
    q = q.double();
  }
  return acc;
}

/** scalar derives a fixed scalar mod L from a label (deterministic vectors). */
const scalar = (label: string): bigint => le(sha512(new TextEncoder().encode(`c1-edge:${label}`))) % L;

/** k = SHA-512(R ‖ A ‖ M) mod L over the bytes exactly as given (RFC 8032 §5.1.7 step 2). */
const challenge = (r: Uint8Array, a: Uint8Array, m: Uint8Array): bigint =>
  le(sha512(Uint8Array.from([...r, ...a, ...m]))) % L;

/** lenient decodes any 32 bytes as a ZIP-215 decoder would (y mod p, any sign bit), or null. */
function lenient(b: Uint8Array): Point | null {
  try {
    return Pt.fromBytes(b, true);
  } catch {
    return null;
  }
}

/** The two group equations on the leniently decoded A and R, with S as an integer (not reduced). */
function equations(a: Uint8Array, m: Uint8Array, sig: Uint8Array): { plain: boolean; cofactored: boolean } {
  const A = lenient(a);
  const R = lenient(sig.subarray(0, 32));
  if (!A || !R) return { plain: false, cofactored: false };
  const k = challenge(sig.subarray(0, 32), a, m);
  const diff = mul(B, le(sig.subarray(32))).subtract(R.add(mul(A, k)));
  return { plain: diff.is0(), cofactored: mul(diff, 8n).is0() };
}

/** orderOf returns the order of a small-order point (1, 2, 4 or 8). */
function orderOf(t: Point): bigint {
  for (const n of [1n, 2n, 4n, 8n]) if (mul(t, n).is0()) return n;
  throw new Error("ed25519edge: not a point of small order");
}

// A point of order 8 (checked: [8]T8 is the identity and [4]T8 is not); the eight small-order
// points are its multiples.
const T8 = Pt.fromBytes(unhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"));
const TORSION: Point[] = [0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n].map((i) => mul(T8, i));
if (!mul(T8, 8n).is0() || mul(T8, 4n).is0()) throw new Error("ed25519edge: T8 is not of order 8");

/** Encodings of small-order points that are not canonical: y ≥ p, or a sign bit on x = 0. */
const NONCANONICAL_SMALL: [string, Uint8Array][] = [
  ["y=p (order 4), sign 0", le32(P)],
  ["y=p (order 4), sign 1", le32(P + (1n << 255n))],
  ["y=p+1 (identity), sign 0", le32(P + 1n)],
  ["y=p+1 (identity), sign 1", le32(P + 1n + (1n << 255n))],
  ["y=1 (identity), sign 1", le32(1n + (1n << 255n))],
  ["y=p-1 (order 2), sign 1", le32(P - 1n + (1n << 255n))],
];

/** The first y in p+2 … p+18 whose residue is on the curve with a point not of small order. */
function noncanonicalLarge(): Uint8Array {
  for (let j = 2n; j <= 18n; j++) {
    const b = le32(P + j);
    const q = lenient(b);
    if (q && !mul(q, 8n).is0()) return b;
  }
  throw new Error("ed25519edge: no non-canonical encoding of a large-order point");
}

/** A y below p that is not the y of any curve point (so its encoding names no point). */
function offCurve(): Uint8Array {
  for (let y = 2n; ; y++) if (!lenient(le32(y))) return le32(y);
}

const MSG = new TextEncoder().encode("sandbox-attest §2.4 edge case");
const a = scalar("signer");
let A: Uint8Array = new Uint8Array(32); // set by ed25519EdgeCases, so importing costs nothing

/** sign makes S = r + k·a mod L over R and A bytes as given. */
function sign(rBytes: Uint8Array, r: bigint, aBytes: Uint8Array, secret: bigint): Uint8Array {
  const k = challenge(rBytes, aBytes, MSG);
  return Uint8Array.from([...rBytes, ...le32((r + k * secret) % L)]);
}

/** findR searches labelled nonces until k satisfies `want`; returns R's bytes and r. */
function findR(label: string, aBytes: Uint8Array, want: (k: bigint) => boolean): [Uint8Array, bigint] {
  for (let i = 0; ; i++) {
    const r = scalar(`${label}/${i}`);
    const rb = B.multiply(r).toBytes();
    if (want(challenge(rb, aBytes, MSG))) return [rb, r];
  }
}

let cases: EdgeCase[] = [];

/** add records a case after checking its construction against what it claims. */
function add(
  id: string,
  desc: string,
  pk: Uint8Array,
  sig: Uint8Array,
  expect: string,
  claim: { plain?: boolean; cofactored?: boolean } = {},
): void {
  const eq = equations(pk, MSG, sig);
  if (claim.plain !== undefined && eq.plain !== claim.plain)
    throw new Error(`${id}: cofactorless claim fails`);
  if (claim.cofactored !== undefined && eq.cofactored !== claim.cofactored)
    throw new Error(`${id}: cofactored claim fails`);
  cases.push({ id, desc, public_key: hex(pk), message: hex(MSG), signature: hex(sig), expect });
}

function baseline(): void {
  const r = scalar("baseline");
  const rb = B.multiply(r).toBytes();
  add("valid", "a signature made by hand from the scalars: valid", A, sign(rb, r, A, a), "ok", {
    plain: true,
  });
}

// A small-order A with a signature the equation accepts (k ≡ 0 mod the order, S = r): the classic
// forgery where one signature verifies for many messages.
function smallOrderKeys(): void {
  TORSION.forEach((t, i) => {
    const pk = t.toBytes();
    const n = orderOf(t);
    const [rb, r] = findR(`small-a-${i}`, pk, (k) => k % n === 0n);
    const sig = Uint8Array.from([...rb, ...le32(r)]);
    add(`small-order-a-${i}`, `A = [${i}]T8 (order ${n}); [S]B = R + [k]A holds`, pk, sig, "SmallOrderKey", {
      plain: true,
    });
  });
}

function noncanonicalKeys(): void {
  NONCANONICAL_SMALL.forEach(([what, pk], i) => {
    const t = lenient(pk);
    const n = t ? orderOf(t) : 1n;
    const [rb, r] = findR(`noncanon-a-${i}`, pk, (k) => k % n === 0n);
    const sig = Uint8Array.from([...rb, ...le32(r)]);
    add(
      `noncanonical-a-${i}`,
      `A encoded with ${what}; a lenient decoder's equation holds`,
      pk,
      sig,
      "NonCanonicalKey",
      {
        plain: t !== null,
      },
    );
  });
  const big = noncanonicalLarge();
  const r = scalar("noncanon-a-large");
  const rb = B.multiply(r).toBytes();
  add(
    "noncanonical-a-large",
    "A encoded with y ≥ p, a point of large order",
    big,
    sign(rb, r, big, a),
    "NonCanonicalKey",
  );
  add("off-curve-a", "A whose y names no curve point", offCurve(), sign(rb, r, A, a), "NonCanonicalKey");
}

// R of small order with S = k·a: the cofactored equation holds for every such R, the cofactorless
// one for the identity only.
function smallOrderR(): void {
  TORSION.forEach((t, i) => {
    const rb = t.toBytes();
    const sig = sign(rb, 0n, A, a);
    add(`small-order-r-${i}`, `R = [${i}]T8; [8][S]B = [8]R + [8][k]A holds`, A, sig, "SmallOrderR", {
      plain: i === 0,
      cofactored: true,
    });
  });
}

function noncanonicalR(): void {
  NONCANONICAL_SMALL.forEach(([what, rb], i) => {
    const sig = sign(rb, 0n, A, a);
    add(`noncanonical-r-${i}`, `R encoded with ${what}; S = k·a`, A, sig, "NonCanonicalR", {
      cofactored: true,
    });
  });
  const big = noncanonicalLarge();
  add(
    "noncanonical-r-large",
    "R encoded with y ≥ p, a point of large order",
    A,
    sign(big, 1n, A, a),
    "NonCanonicalR",
  );
  add("off-curve-r", "R whose y names no curve point", A, sign(offCurve(), 1n, A, a), "NonCanonicalR");
}

// S + L and S + 2L: the same point [S]B, so a verifier that reduces S accepts a second signature.
function largeS(): void {
  const r = scalar("large-s");
  const rb = B.multiply(r).toBytes();
  const s = le(sign(rb, r, A, a).subarray(32));
  for (const m of [1n, 2n]) {
    const sig = Uint8Array.from([...rb, ...le32(s + m * L)]);
    add(`s-plus-${m}l`, `S replaced by S + ${m}L`, A, sig, "NonCanonicalS", { plain: true });
  }
  add(
    "s-max",
    "S = 2^256 − 1",
    A,
    Uint8Array.from([...rb, ...new Array<number>(32).fill(0xff)]),
    "NonCanonicalS",
  );
}

// A = [a]B + T8: a canonical point of order 8L. The verdict is the cofactorless equation's, which
// holds exactly when k ≡ 0 mod 8; otherwise only the cofactored equation holds.
function mixedOrderKey(): void {
  const secret = scalar("mixed-a");
  const pk = B.multiply(secret).add(T8).toBytes();
  const [r0, n0] = findR("mixed-a-ok", pk, (k) => k % 8n === 0n);
  add(
    "mixed-order-a-valid",
    "A of order 8L, k ≡ 0 mod 8: cofactorless equation holds",
    pk,
    sign(r0, n0, pk, secret),
    "ok",
    {
      plain: true,
    },
  );
  const [r1, n1] = findR("mixed-a-bad", pk, (k) => k % 8n !== 0n);
  add(
    "mixed-order-a-cofactored-only",
    "A of order 8L, k ≢ 0 mod 8: only the cofactored equation holds",
    pk,
    sign(r1, n1, pk, secret),
    "BadSignature",
    { plain: false, cofactored: true },
  );
}

// R = [r]B + T8 with S = r + k·a: a canonical R of order 8L that only the cofactored equation accepts.
function cofactoredOnly(): void {
  for (const [i, t] of [TORSION[1]!, TORSION[2]!, TORSION[4]!].entries()) {
    const r = scalar(`cofactored-${i}`);
    const rb = B.multiply(r).add(t).toBytes();
    add(
      `cofactored-only-${i}`,
      `R = [r]B + a point of order ${orderOf(t)}`,
      A,
      sign(rb, r, A, a),
      "BadSignature",
      {
        plain: false,
        cofactored: true,
      },
    );
  }
}

let built: readonly EdgeCase[] | null = null;

/** ed25519EdgeCases returns the edge cases of §2.4 in a fixed order (built once, on first call). */
export function ed25519EdgeCases(): readonly EdgeCase[] {
  if (built) return built;
  A = B.multiply(a).toBytes();
  cases = [];
  const classes = [baseline, smallOrderKeys, noncanonicalKeys, smallOrderR, noncanonicalR, largeS];
  for (const make of [...classes, mixedOrderKey, cofactoredOnly]) make();
  built = cases;
  return built;
}

/**
 * refusedKeys lists the public keys §2.4 refuses: the eight small-order points' canonical
 * encodings, non-canonical encodings, and a y that names no point (for the did:key cases).
 */
export function refusedKeys(): { readonly why: string; readonly key: string }[] {
  return [
    ...TORSION.map((t, i) => ({ why: `small-order-${i}`, key: hex(t.toBytes()) })),
    ...NONCANONICAL_SMALL.map(([, b], i) => ({ why: `noncanonical-${i}`, key: hex(b) })),
    { why: "noncanonical-large", key: hex(noncanonicalLarge()) },
    { why: "off-curve", key: hex(offCurve()) },
  ];
}
