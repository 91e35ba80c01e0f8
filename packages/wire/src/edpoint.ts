// §2.4 The point rules of Ed25519 that every backend is held to: which 32-byte encodings name a
// curve point canonically (RFC 8032 §5.1.3 decoding, strictly), and which name a point of small order.
import { ed25519 as noble } from "@noble/curves/ed25519.js";
import { toHex } from "./bytes.ts";

/**
 * The canonical encodings of the eight points of small order (the torsion subgroup of order 8):
 * the identity, (0, −1), the two points of order 4 and the four of order 8. A canonical encoding
 * names each exactly once; every other encoding of these points is non-canonical.
 */
export const SMALL_ORDER_ENCODINGS: ReadonlySet<string> = new Set([
  "0100000000000000000000000000000000000000000000000000000000000000",
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "0000000000000000000000000000000000000000000000000000000000000000",
  "0000000000000000000000000000000000000000000000000000000000000080",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
]);

// p = 2^255 − 19, little-endian, without the sign bit.
const P_BYTES = Uint8Array.from([0xed, ...new Array<number>(30).fill(0xff), 0x7f]);

/** yBelowP reports whether the y coordinate of an encoding (sign bit cleared) is below p. */
function yBelowP(b: Uint8Array): boolean {
  for (let i = 31; i >= 0; i--) {
    const y = i === 31 ? b[i]! & 0x7f : b[i]!;
    const p = P_BYTES[i]!;
    if (y !== p) return y < p;
  }
  return false;
}

// The two points whose x is 0 (the identity and (0, −1)): a sign bit on them is not canonical.
const SMALL_ORDER_X0 = [
  "0100000000000000000000000000000000000000000000000000000000000000",
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
] as const;

/**
 * hasCanonicalForm is the cheap, byte-level half of the canonical test: 32 bytes, y < p, and no
 * sign bit on the two points whose x is 0 (y = 1 and y = p − 1, RFC 8032 §5.1.3 step 4). A true
 * answer does not yet say the encoding is on the curve; isCanonicalPoint does.
 */
export function hasCanonicalForm(b: Uint8Array): boolean {
  if (b.length !== 32 || !yBelowP(b)) return false;
  if ((b[31]! & 0x80) === 0) return true;
  const y = toHex(Uint8Array.from(b, (v, i) => (i === 31 ? v & 0x7f : v)));
  return y !== SMALL_ORDER_X0[0] && y !== SMALL_ORDER_X0[1];
}

/**
 * isCanonicalPoint reports whether 32 bytes are the canonical encoding of a point on edwards25519:
 * y < p, x recoverable from y (RFC 8032 §5.1.3), and no sign bit when x = 0.
 */
export function isCanonicalPoint(b: Uint8Array): boolean {
  if (!hasCanonicalForm(b)) return false;
  try {
    noble.Point.fromBytes(b, false);
    return true;
  } catch {
    return false;
  }
}

/** isSmallOrderEncoding reports whether 32 bytes are a canonical encoding of a small-order point. */
export function isSmallOrderEncoding(b: Uint8Array): boolean {
  return b.length === 32 && SMALL_ORDER_ENCODINGS.has(toHex(b));
}

/** Why §2.4 refuses a public key: not a canonical point encoding, or a point of small order. */
export type KeyRefusal = "NonCanonicalKey" | "SmallOrderKey";

const keyVerdicts = new Map<string, KeyRefusal | null>();

/**
 * publicKeyRefusal returns why §2.4 refuses `publicKey` as an Ed25519 public key A, or null when it
 * is acceptable: `NonCanonicalKey` when it is not the canonical encoding of a curve point,
 * `SmallOrderKey` when it names one of the eight small-order points. Verdicts are cached per key.
 */
export function publicKeyRefusal(publicKey: Uint8Array): KeyRefusal | null {
  if (publicKey.length !== 32) return "NonCanonicalKey";
  const k = toHex(publicKey);
  const hit = keyVerdicts.get(k);
  if (hit !== undefined) return hit;
  const v = !isCanonicalPoint(publicKey)
    ? "NonCanonicalKey"
    : SMALL_ORDER_ENCODINGS.has(k)
      ? "SmallOrderKey"
      : null;
  if (keyVerdicts.size > 4096) keyVerdicts.clear();
  keyVerdicts.set(k, v);
  return v;
}
