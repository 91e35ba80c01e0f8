// §2.5 Principals: did:key identifiers of Ed25519 keys (multicodec 0xed01, multibase base58btc 'z').
import { publicKeyRefusal } from "./edpoint.ts";
import { WireError } from "./errors.ts";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const INDEX = new Map(Array.from(ALPHABET, (c, i) => [c, i]));

/** base58btcEncode writes bytes in the Bitcoin base58 alphabet. */
export function base58btcEncode(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)]! + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = "1" + out;
  }
  return out;
}

/** base58btcDecode reads the Bitcoin base58 alphabet; returns null on a character outside it. */
export function base58btcDecode(s: string): Uint8Array | null {
  let n = 0n;
  for (const c of s) {
    const v = INDEX.get(c);
    if (v === undefined) return null;
    n = n * 58n + BigInt(v);
  }
  const body: number[] = [];
  while (n > 0n) {
    body.unshift(Number(n & 255n));
    n >>= 8n;
  }
  let zeros = 0;
  while (zeros < s.length && s[zeros] === "1") zeros++;
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...body]);
}

/** encodeDidKey writes the did:key text of 32 bytes, whatever they are. */
function encodeDidKey(publicKey: Uint8Array): string {
  const mc = new Uint8Array(34);
  mc[0] = 0xed;
  mc[1] = 0x01;
  mc.set(publicKey, 2);
  return "did:key:z" + base58btcEncode(mc);
}

/** refuseKey throws `BadDidKey` for a key the Ed25519 rule of §2.4 refuses (its code in the message). */
function refuseKey(publicKey: Uint8Array): void {
  const why = publicKeyRefusal(publicKey);
  if (why) throw new WireError("BadDidKey", `the key is refused by §2.4 (${why})`);
}

/**
 * didKeyFromPublicKey returns `did:key:z…` for a 32-byte Ed25519 public key (§2.5). Throws
 * `BadDidKey` for a key §2.4 refuses: not the canonical encoding of a curve point, or of small order.
 */
export function didKeyFromPublicKey(publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new RangeError("didKeyFromPublicKey: public key must be 32 bytes");
  refuseKey(publicKey);
  return encodeDidKey(publicKey);
}

const decoded = new Map<string, Uint8Array>();

/**
 * publicKeyFromDidKey returns the Ed25519 public key a did:key names (§2.5). Throws `BadDidKey` for
 * any other method, multibase, multicodec or length, for a non-canonical encoding of the did, and
 * for a key §2.4 refuses (not a canonical curve point encoding, or of small order).
 */
export function publicKeyFromDidKey(did: unknown): Uint8Array {
  if (typeof did !== "string") throw new WireError("BadDidKey", "did:key must be a string");
  const hit = decoded.get(did);
  if (hit) return hit;
  if (!did.startsWith("did:key:z") || did.length > 100)
    throw new WireError("BadDidKey", `not a base58btc did:key: ${did.slice(0, 60)}`);
  const mc = base58btcDecode(did.slice(9));
  if (mc?.length !== 34 || mc[0] !== 0xed || mc[1] !== 0x01)
    throw new WireError("BadDidKey", "did:key is not a 32-byte Ed25519 key (multicodec 0xed01)");
  const pk = mc.slice(2);
  if (encodeDidKey(pk) !== did) throw new WireError("BadDidKey", "did:key is not canonically encoded");
  refuseKey(pk);
  if (decoded.size > 4096) decoded.clear();
  decoded.set(did, pk);
  return pk;
}

/** isDidKey reports whether `s` decodes as an Ed25519 did:key. */
export function isDidKey(s: unknown): s is string {
  try {
    publicKeyFromDidKey(s);
    return true;
  } catch {
    return false;
  }
}
