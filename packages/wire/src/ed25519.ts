// §2.4 Ed25519 (RFC 8032) behind one small interface: node:crypto on Node, @noble/curves elsewhere.
// The rule of §2.4 (RFC 8032 §5.1.7, strict) is checked here, before either backend is asked:
// canonical A and R, neither of small order, S < L. The backends then compute the cofactorless
// equation [S]B = R + [k]A, so every backend gives one answer for every signature.
import { ed25519 as noble } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { concatBytes, toHex } from "./bytes.ts";
import { hasCanonicalForm, isCanonicalPoint, isSmallOrderEncoding, publicKeyRefusal } from "./edpoint.ts";

/**
 * The operations the wire layer needs from an Ed25519 implementation. `verify` is asked only after
 * ed25519Refusal has checked the encodings, orders and S of §2.4; it MUST then compute the
 * cofactorless equation [S]B = R + [k]A. Callers verify through verifyEd25519 or ed25519Refusal,
 * never a backend directly: the backends alone disagree on the edge cases.
 */
export interface Ed25519Backend {
  readonly name: string;
  publicKey(seed: Uint8Array): Uint8Array;
  sign(seed: Uint8Array, message: Uint8Array): Uint8Array;
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}

type NodeCrypto = typeof import("node:crypto");

const PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);
const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);

/** nodeBackend wraps node:crypto, caching key objects so repeat signers and verifiers are cheap. */
function nodeBackend(c: NodeCrypto): Ed25519Backend {
  const priv = new Map<string, import("node:crypto").KeyObject>();
  const pub = new Map<string, import("node:crypto").KeyObject>();
  const privKey = (seed: Uint8Array) => {
    const k = toHex(seed);
    let o = priv.get(k);
    if (!o) {
      o = c.createPrivateKey({
        key: Buffer.from(concatBytes(PKCS8_PREFIX, seed)),
        format: "der",
        type: "pkcs8",
      });
      if (priv.size > 1024) priv.clear();
      priv.set(k, o);
    }
    return o;
  };
  const pubKey = (p: Uint8Array) => {
    const k = toHex(p);
    let o = pub.get(k);
    if (!o) {
      o = c.createPublicKey({ key: Buffer.from(concatBytes(SPKI_PREFIX, p)), format: "der", type: "spki" });
      if (pub.size > 4096) pub.clear();
      pub.set(k, o);
    }
    return o;
  };
  return {
    name: "node:crypto",
    publicKey(seed) {
      const der = c.createPublicKey(privKey(seed)).export({ format: "der", type: "spki" });
      return new Uint8Array(der.subarray(SPKI_PREFIX.length));
    },
    sign: (seed, msg) => new Uint8Array(c.sign(null, msg, privKey(seed))),
    verify(p, msg, sig) {
      try {
        return c.verify(null, msg, pubKey(p), sig);
      } catch {
        return false;
      }
    },
  };
}

/** littleEndian reads bytes as an unsigned little-endian integer. */
function littleEndian(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}

const L_BIG = 2n ** 252n + 27742317777372353535851937790883648493n;

/**
 * cofactorless checks [S]B = R + [k]A with k = SHA-512(R ‖ A ‖ M) mod L on @noble/curves points
 * (RFC 8032 §5.1.7 without the optional cofactor): the equation node:crypto computes. noble's own
 * `verify` multiplies by the cofactor, and so accepts signatures that node refuses.
 */
function cofactorless(p: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  if (sig.length !== 64) return false;
  const rBytes = sig.subarray(0, 32);
  const s = littleEndian(sig.subarray(32));
  if (s >= L_BIG) return false;
  const A = noble.Point.fromBytes(p, false);
  const R = noble.Point.fromBytes(rBytes, false);
  const k = littleEndian(sha512(concatBytes(rBytes, p, msg))) % L_BIG;
  return noble.Point.BASE.multiplyUnsafe(s).equals(R.add(A.multiplyUnsafe(k)));
}

/** nobleBackend is the portable fallback (browsers): RFC 8032 §5.1.7, cofactorless, no ZIP-215. */
export const nobleBackend: Ed25519Backend = {
  name: "@noble/curves",
  publicKey: (seed) => noble.getPublicKey(seed),
  sign: (seed, msg) => noble.sign(msg, seed),
  verify(p, msg, sig) {
    try {
      return cofactorless(p, msg, sig);
    } catch {
      return false;
    }
  },
};

async function loadNode(): Promise<Ed25519Backend | null> {
  try {
    return nodeBackend(await import("node:crypto"));
  } catch {
    return null;
  }
}

/** The backend in use: node:crypto where it loads, else @noble/curves (or one set by useEd25519Backend). */
export let ed25519: Ed25519Backend = (await loadNode()) ?? nobleBackend;

/**
 * useEd25519Backend makes `backend` the one every verification asks from now on, and returns the one
 * it replaces (e.g. a browser page answers from signatures it checked ahead with WebCrypto). The §2.4
 * checks of ed25519Refusal still run before any backend is asked.
 */
export function useEd25519Backend(backend: Ed25519Backend): Ed25519Backend {
  const before = ed25519;
  ed25519 = backend;
  return before;
}

// L = 2^252 + 27742317777372353535851937790883648493, little-endian.
const L = Uint8Array.from([
  0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
]);

/** isCanonicalS reports whether the S half of a 64-byte signature is below L (RFC 8032 §5.1.7). */
export function isCanonicalS(sig: Uint8Array): boolean {
  for (let i = 31; i >= 0; i--) {
    const s = sig[32 + i]!;
    const l = L[i]!;
    if (s !== l) return s < l;
  }
  return false;
}

/** Why §2.4 refuses an Ed25519 signature, in the order the checks are made. */
export type Ed25519Refusal =
  "NonCanonicalKey" | "SmallOrderKey" | "NonCanonicalR" | "SmallOrderR" | "NonCanonicalS" | "BadSignature";

/**
 * ed25519Refusal applies the rule of §2.4 and returns the first refusal, or null when the
 * signature is valid. In order: A is the canonical encoding of a curve point (`NonCanonicalKey`)
 * not of small order (`SmallOrderKey`); the signature is 64 bytes (`BadSignature`); R is a canonical
 * point encoding (`NonCanonicalR`) not of small order (`SmallOrderR`); S < L (`NonCanonicalS`); and
 * last the cofactorless equation [S]B = R + [k]A, computed by `backend` (`BadSignature`).
 */
export function ed25519Refusal(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  backend: Ed25519Backend = ed25519,
): Ed25519Refusal | null {
  const key = publicKeyRefusal(publicKey);
  if (key) return key;
  if (signature.length !== 64) return "BadSignature";
  const r = signature.subarray(0, 32);
  if (!hasCanonicalForm(r)) return "NonCanonicalR";
  if (isSmallOrderEncoding(r)) return "SmallOrderR";
  // Whether R is on the curve costs a square root: asked only on the way to a refusal, since a
  // signature the equation accepts has an R that decodes.
  if (!isCanonicalS(signature)) return isCanonicalPoint(r) ? "NonCanonicalS" : "NonCanonicalR";
  if (backend.verify(publicKey, message, signature)) return null;
  return isCanonicalPoint(r) ? "BadSignature" : "NonCanonicalR";
}

/** verifyEd25519 reports whether a signature is valid under the rule of §2.4 (ed25519Refusal). */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return ed25519Refusal(publicKey, message, signature) === null;
}
