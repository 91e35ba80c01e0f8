// §2.3 Digests: BLAKE3-256 written `blake3:` + 64 lowercase hex; the content address of a JSON
// value is the digest of its canonical bytes; inside hash inputs a digest is its 32 raw bytes.
import { blake3 } from "./blake3.ts";
import { fromHex, toHex } from "./bytes.ts";
import { WireError } from "./errors.ts";
import { canonicalBytes } from "./json.ts";

/** A digest in its wire form, `blake3:<64 lowercase hex>`. */
export type Digest = `blake3:${string}`;

const DIGEST_RE = /^blake3:[0-9a-f]{64}$/;

/** isDigest reports whether `s` is a well-formed digest string. */
export function isDigest(s: unknown): s is Digest {
  return typeof s === "string" && DIGEST_RE.test(s);
}

/** parseDigest returns the 32 raw bytes of a digest string; throws `BadDigest` on any other form. */
export function parseDigest(s: unknown): Uint8Array {
  if (!isDigest(s))
    throw new WireError("BadDigest", `not a blake3:<64 hex> digest: ${String(s).slice(0, 80)}`);
  return fromHex(s.slice(7));
}

/** formatDigest writes 32 raw bytes as a digest string. */
export function formatDigest(raw: Uint8Array): Digest {
  if (raw.length !== 32) throw new RangeError("formatDigest: raw digest must be 32 bytes");
  return `blake3:${toHex(raw)}`;
}

/** digestBytes returns the digest of raw bytes (§2.3). */
export function digestBytes(data: Uint8Array): Digest {
  return formatDigest(blake3(data));
}

/** addressOf returns the content address of a JSON value: the digest of its JCS bytes (§2.3). */
export function addressOf(value: unknown): Digest {
  return digestBytes(canonicalBytes(value));
}
