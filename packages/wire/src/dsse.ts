// §2.4 Signing: DSSE envelopes with Ed25519 over the pre-authentication encoding (PAE). The payload
// is the canonical (JCS) bytes of a JSON object; the object's address is the digest of those bytes,
// so adding a signature never changes what it is.
import { bytesEqual, concatBytes, fromBase64, toBase64, utf8 } from "./bytes.ts";
import { publicKeyFromDidKey } from "./didkey.ts";
import { digestBytes, type Digest } from "./digest.ts";
import { verifyEd25519 } from "./ed25519.ts";
import { WireError } from "./errors.ts";
import { canonicalBytes, parseCanonical, type Json, type JsonObject } from "./json.ts";
import { signBytes, type KeyPair } from "./keys.ts";

/** One signature of an envelope; `keyid` is the signer's did:key. */
export interface Signature {
  readonly keyid: string;
  readonly sig: string;
}

/** A DSSE envelope as it travels. */
export interface Envelope {
  readonly payloadType: string;
  readonly payload: string;
  readonly signatures: readonly Signature[];
}

/** What opening an envelope yields: the parsed payload, its bytes and address, and who signed. */
export interface Opened<T = JsonObject> {
  readonly payload: T;
  readonly bytes: Uint8Array;
  readonly address: Digest;
  readonly signers: readonly string[];
}

/** pae is DSSE's pre-authentication encoding: "DSSEv1" SP len(type) SP type SP len(body) SP body. */
export function pae(payloadType: string, body: Uint8Array): Uint8Array {
  const t = utf8(payloadType);
  return concatBytes(utf8(`DSSEv1 ${t.length} `), t, utf8(` ${body.length} `), body);
}

/** signPayload canonicalises `value`, and signs it as `payloadType` with every key given (§2.4). */
export function signPayload(
  payloadType: string,
  value: unknown,
  keys: KeyPair | readonly KeyPair[],
): Envelope {
  const body = canonicalBytes(value);
  const msg = pae(payloadType, body);
  const list = Array.isArray(keys) ? (keys as readonly KeyPair[]) : [keys as KeyPair];
  if (list.length === 0) throw new RangeError("signPayload: at least one key is required");
  const signatures = list.map((k) => ({ keyid: k.did, sig: toBase64(signBytes(k, msg)) }));
  return { payloadType, payload: toBase64(body), signatures };
}

/** Options for opening an envelope. */
export interface OpenOptions {
  /** The payload type the caller expects; anything else is `WrongPayloadType`. */
  readonly payloadType: string;
  /** When given, at least one valid signature must come from one of these did:keys (`UnknownSigner`). */
  readonly signers?: readonly string[];
  /** Largest payload accepted, in bytes (default 16 MiB). */
  readonly maxBytes?: number;
}

function strictBase64(s: unknown, what: string): Uint8Array {
  const b = typeof s === "string" ? fromBase64(s) : null;
  if (b === null || toBase64(b) !== s)
    throw new WireError("BadEnvelope", `${what} is not canonical padded base64`);
  return b;
}

/** assertEnvelopeShape refuses anything but {payloadType, payload, signatures:[{keyid, sig}…]}. */
export function assertEnvelopeShape(env: unknown): asserts env is Envelope {
  const e = env as Record<string, unknown> | null;
  if (typeof e !== "object" || e === null || Array.isArray(e))
    throw new WireError("BadEnvelope", "envelope is not an object");
  const keys = Object.keys(e).sort().join(",");
  if (keys !== "payload,payloadType,signatures")
    throw new WireError("BadEnvelope", `envelope members are ${keys}`);
  if (typeof e.payloadType !== "string" || typeof e.payload !== "string")
    throw new WireError("BadEnvelope", "payloadType and payload must be strings");
  if (!Array.isArray(e.signatures) || e.signatures.length === 0 || e.signatures.length > 16)
    throw new WireError("BadEnvelope", "signatures must be a list of 1 to 16 entries");
  for (const s of e.signatures as unknown[]) {
    const o = s as Record<string, unknown> | null;
    if (
      typeof o !== "object" ||
      o === null ||
      Object.keys(o).sort().join(",") !== "keyid,sig" ||
      typeof o.keyid !== "string" ||
      typeof o.sig !== "string"
    )
      throw new WireError("BadEnvelope", "each signature is {keyid, sig}");
  }
}

/**
 * openEnvelope verifies a DSSE envelope (§2.4), in this order: its shape (`BadEnvelope`), payload
 * type (`WrongPayloadType`), payload size (`OversizeInput`), every signature by the did:key in its
 * keyid (`BadDidKey`, `BadSignature`), when `signers` is given a valid signature from one of them
 * (`UnknownSigner`), and last the payload's canonical form (`NotCanonical` and the strict-parse
 * codes). Returns the parsed payload.
 */
export function openEnvelope<T = JsonObject>(env: unknown, opts: OpenOptions): Opened<T> {
  assertEnvelopeShape(env);
  if (env.payloadType !== opts.payloadType)
    throw new WireError("WrongPayloadType", `got ${env.payloadType}, want ${opts.payloadType}`);
  const bytes = strictBase64(env.payload, "payload");
  const maxBytes = opts.maxBytes ?? 16 * 1024 * 1024;
  if (bytes.length > maxBytes)
    throw new WireError("OversizeInput", `payload of ${bytes.length} bytes exceeds ${maxBytes}`);
  // Signatures first, over the exact bytes (DSSE: verify before parsing); then the payload's form.
  const msg = pae(env.payloadType, bytes);
  const signers: string[] = [];
  for (const s of env.signatures) {
    const pk = publicKeyFromDidKey(s.keyid);
    const sig = strictBase64(s.sig, "signature");
    if (!verifyEd25519(pk, msg, sig))
      throw new WireError("BadSignature", `signature by ${s.keyid} does not verify`);
    signers.push(s.keyid);
  }
  if (opts.signers && !signers.some((d) => opts.signers?.includes(d)))
    throw new WireError(
      "UnknownSigner",
      `signed by ${signers.join(", ")}, want one of ${opts.signers.join(", ")}`,
    );
  const payload = parseCanonical(bytes, { maxBytes });
  if (typeof payload !== "object" || payload === null || Array.isArray(payload))
    throw new WireError("BadEnvelope", "payload is not a JSON object");
  return { payload: payload as T, bytes, address: digestBytes(bytes), signers };
}

/** envelopeAddress returns the address of a signed object: the digest of its payload bytes (§2.4). */
export function envelopeAddress(env: Envelope): Digest {
  return digestBytes(strictBase64(env.payload, "payload"));
}

/** samePayload reports whether two envelopes carry byte-identical payloads. */
export function samePayload(a: Envelope, b: Envelope): boolean {
  return bytesEqual(strictBase64(a.payload, "payload"), strictBase64(b.payload, "payload"));
}

/** payloadOf decodes an envelope's payload without verifying it (for display only). */
export function payloadOf(env: Envelope): Json {
  return parseCanonical(strictBase64(env.payload, "payload"));
}
