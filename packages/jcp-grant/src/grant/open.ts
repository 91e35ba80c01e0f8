// §4.1 Opening a signed grant: envelope shape, payload type, size, the issuer's one signature, and
// the payload's form. A bounded cache of envelopes already opened skips the signature check for a
// byte-identical envelope (same payload, keyid and signature), which is all that was verified.
import {
  assertEnvelopeShape,
  openEnvelope,
  WireError,
  type Digest,
  type Envelope,
  type Opened,
} from "@sbx/wire";
import { JcpError, type JcpErrorCode } from "../errors.ts";
import { checkGrantPayload, type GrantPayload } from "./grant.ts";
import { GRANT_PAYLOAD_TYPE, MAX_GRANT_BYTES } from "./limits.ts";

/** An opened grant: its checked payload and its address (the digest of the payload bytes). */
export interface OpenedGrant {
  readonly payload: GrantPayload;
  readonly address: Digest;
}

/** rethrow turns a wire-layer refusal into a JcpError with the same code. */
export function rethrow(e: unknown): never {
  if (e instanceof WireError) throw new JcpError(e.code, e.message, { cause: e });
  throw e;
}

/**
 * openSigned opens a DSSE envelope of `payloadType` holding at most `maxBytes` (wire §2.4), refusing
 * as JcpErrors: a payload over the limit is `oversize`, every other wire refusal keeps its code.
 */
export function openSigned(
  env: unknown,
  payloadType: string,
  maxBytes: number,
  oversize: JcpErrorCode,
): Opened {
  try {
    return openEnvelope(env, { payloadType, maxBytes });
  } catch (e) {
    if (e instanceof WireError && e.code === "OversizeInput")
      throw new JcpError(oversize, e.message, { cause: e });
    rethrow(e);
  }
}

/** GrantCache remembers envelopes that opened successfully; at most `max` entries, oldest dropped first. */
export class GrantCache {
  readonly #entries = new Map<string, OpenedGrant>();
  readonly #max: number;
  constructor(max = 10_000) {
    if (!Number.isSafeInteger(max) || max < 1)
      throw new RangeError("GrantCache: max must be a positive integer");
    this.#max = max;
  }
  static key(env: Envelope): string {
    const s = env.signatures[0];
    return `${s?.keyid ?? ""} ${s?.sig ?? ""} ${env.payload}`;
  }
  get(env: Envelope): OpenedGrant | undefined {
    return this.#entries.get(GrantCache.key(env));
  }
  set(env: Envelope, g: OpenedGrant): void {
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(GrantCache.key(env), g);
  }
  get size(): number {
    return this.#entries.size;
  }
}

// Base64 length of the largest payload accepted: refused before any decoding.
const MAX_B64 = 4 * Math.ceil(MAX_GRANT_BYTES / 3);

function checkOuter(env: unknown): Envelope {
  try {
    assertEnvelopeShape(env);
  } catch (e) {
    rethrow(e);
  }
  if (env.payloadType !== GRANT_PAYLOAD_TYPE)
    throw new JcpError("WrongPayloadType", `got ${env.payloadType}, want ${GRANT_PAYLOAD_TYPE}`);
  if (env.payload.length > MAX_B64)
    throw new JcpError("GrantTooLarge", `payload exceeds ${MAX_GRANT_BYTES} bytes`);
  if (env.signatures.length !== 1)
    throw new JcpError("BadSignature", `a grant carries exactly one signature, not ${env.signatures.length}`);
  return env;
}

/**
 * openGrant verifies a grant envelope (§4.1), in this order: envelope shape (`BadEnvelope`),
 * payload type (`WrongPayloadType`), size over 8 KiB (`GrantTooLarge`), exactly one signature
 * (`BadSignature`), that signature (`BadSignature`, `BadDidKey`), canonical payload (`NotCanonical`
 * and the strict-parse codes), the payload's form (`BadGrant`, `BadPattern`), and last that the
 * signer is the payload's issuer (`BadSignature`). With a cache, a byte-identical envelope opened before
 * returns at once.
 */
export function openGrant(env: unknown, cache?: GrantCache): OpenedGrant {
  const e = checkOuter(env);
  const hit = cache?.get(e);
  if (hit) return hit;
  const opened = openSigned(e, GRANT_PAYLOAD_TYPE, MAX_GRANT_BYTES, "GrantTooLarge");
  const payload = checkGrantPayload(opened.payload);
  if (opened.signers[0] !== payload.issuer)
    throw new JcpError("BadSignature", "a grant is signed by its issuer");
  const g: OpenedGrant = { payload, address: opened.address };
  cache?.set(e, g);
  return g;
}
