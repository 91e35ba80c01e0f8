// Small builders the class generators share: valid cases and refusals in the vector shape.
import { pae, signBytes, toBase64, type Json, type KeyPair } from "@sbx/wire";
import type { ClassId, Vector } from "../types.ts";

/** okCase builds a vector that must succeed, with its exact output when given. */
export function okCase(
  cls: ClassId,
  id: string,
  desc: string,
  op: string,
  input: Json,
  output?: Json,
): Vector {
  return output === undefined
    ? { id, class: cls, desc, op, input, expect: "ok" }
    : { id, class: cls, desc, op, input, expect: "ok", output };
}

/** errCase builds a vector that must be refused with `code`. */
export function errCase(
  cls: ClassId,
  id: string,
  desc: string,
  op: string,
  input: Json,
  code: string,
): Vector {
  return { id, class: cls, desc, op, input, expect: { error: code } };
}

/** flipHexByte flips the low bit of byte `i` of a hex string (a systematic single-bit break). */
export function flipHexByte(hex: string, i: number): string {
  const b = parseInt(hex.slice(2 * i, 2 * i + 2), 16) ^ 1;
  return hex.slice(0, 2 * i) + b.toString(16).padStart(2, "0") + hex.slice(2 * i + 2);
}

/** flipBase64Byte flips the low bit of byte `i` of standard base64 text, keeping it canonical. */
export function flipBase64Byte(b64: string, i: number): string {
  const b = Buffer.from(b64, "base64");
  b[i % b.length]! ^= 1;
  return b.toString("base64");
}

/** A one-signature DSSE envelope as a plain JSON object (usable both as an Envelope and as Json). */
export type RawEnvelope = {
  payloadType: string;
  payload: string;
  signatures: { keyid: string; sig: string }[];
};

/**
 * signedRaw signs `body` exactly as given, not canonicalised, as `payloadType` with key `k`: for the
 * cases the signing APIs would re-encode or refuse (a validly signed non-canonical payload, a
 * statement a builder rejects).
 */
export function signedRaw(payloadType: string, body: Uint8Array, k: KeyPair): RawEnvelope {
  const sig = toBase64(signBytes(k, pae(payloadType, body)));
  return { payloadType, payload: toBase64(body), signatures: [{ keyid: k.did, sig }] };
}
