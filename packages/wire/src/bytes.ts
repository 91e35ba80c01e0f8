// Byte helpers shared by every layer: hex, base64, UTF-8, concatenation, comparison.

const HEX = "0123456789abcdef";
const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
// Every ASCII code unit's nibble value (−1: not a hex digit).
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  NIBBLE[HEX.charCodeAt(i)] = i;
  NIBBLE[HEX.toUpperCase().charCodeAt(i)] = i;
}

const HEX_CODES = Uint8Array.from(HEX, (c) => c.charCodeAt(0));

/** toHex writes bytes as lowercase hex (a flat string, so later reads of it need no flattening). */
export function toHex(bytes: Uint8Array): string {
  const codes = new Uint8Array(2 * bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    codes[2 * i] = HEX_CODES[bytes[i]! >> 4]!;
    codes[2 * i + 1] = HEX_CODES[bytes[i]! & 15]!;
  }
  return dec.decode(codes);
}

const nibble = (c: number): number => (c < 128 ? NIBBLE[c]! : -1);

/** fromHex reads even-length lowercase or uppercase hex; throws RangeError on anything else. */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0) throw new RangeError("hex: not an even-length hex string");
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = nibble(hex.charCodeAt(2 * i));
    const lo = nibble(hex.charCodeAt(2 * i + 1));
    if ((hi | lo) < 0) throw new RangeError("hex: not an even-length hex string");
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** utf8 encodes a string as UTF-8. */
export function utf8(s: string): Uint8Array {
  return enc.encode(s);
}

/** fromUtf8 decodes UTF-8, throwing TypeError on malformed input. */
export function fromUtf8(b: Uint8Array): string {
  return dec.decode(b);
}

// Node's Buffer where present (fast); atob/btoa in a browser.
const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;

/** toBase64 writes standard base64 with padding (RFC 4648 §4), as DSSE uses. */
export function toBase64(b: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");
  let bin = "";
  for (const x of b) bin += String.fromCharCode(x);
  return btoa(bin);
}

/** fromBase64 reads standard base64 with padding; returns null when the text is not that form. */
export function fromBase64(s: string): Uint8Array | null {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null;
  if (NodeBuffer) {
    const b = NodeBuffer.from(s, "base64");
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

/** concatBytes joins byte arrays. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** bytesEqual compares two byte arrays. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** compareBytes orders byte strings lexicographically (used for "sorted by name bytes"). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
