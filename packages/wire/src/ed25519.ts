// §2.4 Ed25519 (RFC 8032) behind one small interface: node:crypto on Node, @noble/curves elsewhere.
// Both refuse a signature whose S is not below the group order L (RFC 8032 §5.1.7); the check is
// also made here, before either backend runs, so no backend can be laxer than the spec.
import { ed25519 as noble } from "@noble/curves/ed25519.js";
import { concatBytes, toHex } from "./bytes.ts";

/** The operations the wire layer needs from an Ed25519 implementation. */
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

/** nobleBackend is the portable fallback (browsers), strict RFC 8032 verification (no ZIP-215). */
export const nobleBackend: Ed25519Backend = {
  name: "@noble/curves",
  publicKey: (seed) => noble.getPublicKey(seed),
  sign: (seed, msg) => noble.sign(msg, seed),
  verify(p, msg, sig) {
    try {
      return noble.verify(sig, msg, p, { zip215: false });
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

/** The backend in use: node:crypto where it loads, else @noble/curves. */
export const ed25519: Ed25519Backend = (await loadNode()) ?? nobleBackend;

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

/** verifyEd25519 checks lengths and S < L, then the backend's verification. */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64 || !isCanonicalS(signature)) return false;
  return ed25519.verify(publicKey, message, signature);
}
