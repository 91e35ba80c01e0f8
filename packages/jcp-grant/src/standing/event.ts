// §4.6 Events: canonical objects with a content address, given bare or in a DSSE envelope signed by
// their source's key, and the trigger match that decides whether an event may mint.
import {
  addressOf,
  openEnvelope,
  signPayload,
  type Digest,
  type Envelope,
  type Json,
  type KeyPair,
} from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { rethrow } from "../grant/open.ts";
import type { PolicyPayload, Trigger } from "./policy.ts";

/** The payload type of a signed event (§4.6). */
export const EVENT_PAYLOAD_TYPE = "application/vnd.jcp.event+json";
/** Largest event payload in bytes. */
export const MAX_EVENT_BYTES = 16384;

/** An event as stated: its type, source, time and any other members (data). */
export interface EventPayload {
  readonly type: string;
  readonly source: string;
  readonly at_ms: number;
  readonly [k: string]: Json;
}

/** An opened event: payload, address, and the key that signed it (null when bare). */
export interface OpenedEvent {
  readonly payload: EventPayload;
  readonly address: Digest;
  readonly signer: string | null;
}

function isSigned(v: unknown): boolean {
  return typeof v === "object" && v !== null && "payloadType" in v && "signatures" in v;
}

function checkEvent(v: unknown): EventPayload {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new JcpError("BadEvent", "an event is an object");
  const e = v as Record<string, unknown>;
  if (typeof e.type !== "string" || typeof e.source !== "string")
    throw new JcpError("BadEvent", "an event states type and source");
  if (typeof e.at_ms !== "number" || !Number.isSafeInteger(e.at_ms) || e.at_ms < 0)
    throw new JcpError("BadEvent", "an event states at_ms, a non-negative integer");
  return v as EventPayload;
}

/**
 * openEvent opens an event (§4.6): a DSSE envelope of type `application/vnd.jcp.event+json` with one
 * signature (wire codes, `BadSignature` for more than one), or a bare object. Either way the
 * payload must state `type`, `source` and `at_ms` (`BadEvent`); its address is that of its JCS bytes.
 */
export function openEvent(v: unknown): OpenedEvent {
  if (isSigned(v)) {
    let opened;
    try {
      opened = openEnvelope(v, { payloadType: EVENT_PAYLOAD_TYPE, maxBytes: MAX_EVENT_BYTES });
    } catch (e) {
      rethrow(e);
    }
    if (opened.signers.length !== 1) throw new JcpError("BadSignature", "an event carries one signature");
    return { payload: checkEvent(opened.payload), address: opened.address, signer: opened.signers[0]! };
  }
  const payload = checkEvent(v);
  let address: Digest;
  try {
    address = addressOf(payload);
  } catch (e) {
    rethrow(e);
  }
  return { payload, address, signer: null };
}

/** signEvent signs an event as its source's key (§4.6). */
export function signEvent(event: EventPayload, source: KeyPair): Envelope {
  return signPayload(EVENT_PAYLOAD_TYPE, checkEvent(event), source);
}

/** triggerMatches reports whether one trigger admits the event: type, source and, if named, signer. */
export function triggerMatches(t: Trigger, e: OpenedEvent): boolean {
  return (
    t.type === e.payload.type &&
    t.source === e.payload.source &&
    (t.signed_by === undefined || t.signed_by === e.signer)
  );
}

/** assertTriggered refuses (`TriggerMismatch`) an event no trigger of the policy admits (§4.6). */
export function assertTriggered(p: PolicyPayload, e: OpenedEvent): void {
  if (!p.triggers.some((t) => triggerMatches(t, e)))
    throw new JcpError(
      "TriggerMismatch",
      `event ${e.address} (${e.payload.type.slice(0, 40)} from ${e.payload.source.slice(0, 40)}) matches no trigger`,
    );
}
