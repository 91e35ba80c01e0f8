// §4.7 The two kinds of entry in a grant's checkpoint log: the holder's checkpoint of its own state
// and the issuer's amendment, each a DSSE envelope with one signature by the principal it names.
import {
  isAmount,
  isDidKey,
  isDigest,
  openEnvelope,
  WireError,
  type Amount,
  type Digest,
  type Envelope,
} from "@sbx/wire";
import { JcpError, type JcpErrorCode } from "../errors.ts";
import { rethrow } from "../grant/open.ts";
import { checkActions, checkResources } from "../grant/scope.ts";
import { MAX_DEPTH } from "../grant/limits.ts";

/** The payload type of a checkpoint (§4.7). */
export const CHECKPOINT_PAYLOAD_TYPE = "application/vnd.jcp.checkpoint+json";
/** The payload type of an amendment (§4.7). */
export const AMENDMENT_PAYLOAD_TYPE = "application/vnd.jcp.amendment+json";
/** The chain tag of a checkpoint log: head₀ = BLAKE3("jcp.checkpointlog/1" ‖ grant address). */
export const CHECKPOINT_LOG_TAG = "jcp.checkpointlog/1";

/** Spend so far as a checkpoint states it. */
export interface SpentFields {
  readonly uj: Amount;
  readonly calls: number;
  readonly wall_ms: number;
}

/** A checkpoint as the holder signs it (§4.7). `amendments` counts the amendments it has seen. */
export interface CheckpointPayload {
  readonly grant: Digest;
  readonly seq: number;
  readonly prev: Digest;
  readonly state: Digest;
  readonly spent: SpentFields;
  readonly amendments: number;
  readonly at_ms: number;
  readonly by: string;
}

/** What an amendment sets: each member present replaces the grant's current value. */
export interface AmendmentSet {
  readonly resources?: readonly string[];
  readonly actions?: readonly string[];
  readonly uj?: Amount;
  readonly calls?: number;
  readonly wall_ms?: number;
  readonly exp_ms?: number;
  readonly depth?: number;
}

/** An amendment as the issuer signs it (§4.7), citing the checkpoint it responds to. */
export interface AmendmentPayload {
  readonly grant: Digest;
  readonly seq: number;
  readonly prev: Digest;
  readonly responds_to: Digest;
  readonly set: AmendmentSet;
  readonly at_ms: number;
  readonly by: string;
}

/** One opened log entry. */
export type LogEntry =
  | {
      readonly kind: "checkpoint";
      readonly payload: CheckpointPayload;
      readonly address: Digest;
      readonly signer: string;
    }
  | {
      readonly kind: "amendment";
      readonly payload: AmendmentPayload;
      readonly address: Digest;
      readonly signer: string;
    };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
function keysAre(v: Record<string, unknown>, keys: string, code: JcpErrorCode): void {
  if (Object.keys(v).sort().join(",") !== keys) throw new JcpError(code, `the members are exactly ${keys}`);
}
function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}
function common(v: Record<string, unknown>, code: JcpErrorCode): void {
  if (!isDigest(v.grant) || !isDigest(v.prev)) throw new JcpError(code, "grant and prev are digests");
  if (!isDidKey(v.by)) throw new JcpError(code, "by is a did:key");
  if (!isCount(v.seq) || !isCount(v.at_ms))
    throw new JcpError(code, "seq and at_ms are non-negative integers");
}

function checkCheckpoint(v: Record<string, unknown>): CheckpointPayload {
  keysAre(v, "amendments,at_ms,by,grant,prev,seq,spent,state", "BadCheckpoint");
  common(v, "BadCheckpoint");
  if (!isDigest(v.state)) throw new JcpError("BadCheckpoint", "state is a digest");
  if (!isCount(v.amendments)) throw new JcpError("BadCheckpoint", "amendments is a count");
  const s = v.spent;
  if (!isObject(s)) throw new JcpError("BadCheckpoint", "spent is an object");
  keysAre(s, "calls,uj,wall_ms", "BadCheckpoint");
  if (!isAmount(s.uj) || !isCount(s.calls) || !isCount(s.wall_ms))
    throw new JcpError("BadCheckpoint", "spent is {uj amount, calls, wall_ms}");
  return v as unknown as CheckpointPayload;
}

const SET_KEYS = ["actions", "calls", "depth", "exp_ms", "resources", "uj", "wall_ms"];

function checkSet(s: unknown): void {
  if (!isObject(s) || Object.keys(s).length === 0)
    throw new JcpError("BadAmendment", "set is a non-empty object");
  for (const k of Object.keys(s))
    if (!SET_KEYS.includes(k)) throw new JcpError("BadAmendment", `set has unknown member ${k.slice(0, 40)}`);
  const strs = (x: unknown) => Array.isArray(x) && x.every((y) => typeof y === "string");
  try {
    if (s.resources !== undefined) {
      if (!strs(s.resources)) throw new JcpError("BadAmendment", "set.resources is a list of strings");
      checkResources(s.resources);
    }
    if (s.actions !== undefined) {
      if (!strs(s.actions)) throw new JcpError("BadAmendment", "set.actions is a list of strings");
      checkActions(s.actions);
    }
  } catch (e) {
    if (e instanceof JcpError && e.code === "BadGrant") throw new JcpError("BadAmendment", e.message);
    throw e;
  }
  if (s.uj !== undefined && !isAmount(s.uj)) throw new JcpError("BadAmendment", "set.uj is an amount");
  for (const k of ["calls", "wall_ms", "exp_ms"] as const)
    if (s[k] !== undefined && !isCount(s[k])) throw new JcpError("BadAmendment", `set.${k} is a count`);
  if (s.depth !== undefined && (!isCount(s.depth) || s.depth > MAX_DEPTH))
    throw new JcpError("BadAmendment", `set.depth is 0 to ${MAX_DEPTH}`);
}

function checkAmendment(v: Record<string, unknown>): AmendmentPayload {
  keysAre(v, "at_ms,by,grant,prev,responds_to,seq,set", "BadAmendment");
  common(v, "BadAmendment");
  if (!isDigest(v.responds_to)) throw new JcpError("BadAmendment", "responds_to is a digest");
  checkSet(v.set);
  return v as unknown as AmendmentPayload;
}

/** checkEntryPayload checks a payload of either kind (`BadCheckpoint`, `BadAmendment`, `BadPattern`). */
export function checkEntryPayload(
  kind: "checkpoint" | "amendment",
  v: unknown,
): CheckpointPayload | AmendmentPayload {
  const code = kind === "checkpoint" ? "BadCheckpoint" : "BadAmendment";
  if (!isObject(v)) throw new JcpError(code, "an entry is an object");
  return kind === "checkpoint" ? checkCheckpoint(v) : checkAmendment(v);
}

/**
 * openLogEntry opens one log entry (§4.7): its kind from its payload type (`WrongPayloadType` for
 * any other), the wire checks (`BadEnvelope`, `BadSignature`, `NotCanonical`, …), the form
 * (`BadCheckpoint`, `BadAmendment`), and exactly one signature (`BadSignature`). Whose signature
 * it must be is checked by the log.
 */
export function openLogEntry(env: unknown): LogEntry {
  const t = isObject(env) ? env.payloadType : undefined;
  const kind = t === AMENDMENT_PAYLOAD_TYPE ? "amendment" : "checkpoint";
  let opened;
  try {
    opened = openEnvelope(env, {
      payloadType: kind === "amendment" ? AMENDMENT_PAYLOAD_TYPE : CHECKPOINT_PAYLOAD_TYPE,
      maxBytes: 8192,
    });
  } catch (e) {
    if (e instanceof WireError && e.code === "OversizeInput")
      throw new JcpError(kind === "amendment" ? "BadAmendment" : "BadCheckpoint", e.message);
    rethrow(e);
  }
  if (opened.signers.length !== 1) throw new JcpError("BadSignature", "a log entry carries one signature");
  const signer = opened.signers[0]!;
  const address = opened.address;
  return kind === "amendment"
    ? { kind, payload: checkEntryPayload(kind, opened.payload) as AmendmentPayload, address, signer }
    : { kind, payload: checkEntryPayload(kind, opened.payload) as CheckpointPayload, address, signer };
}

/** An envelope and its opened form. */
export interface SignedEntry {
  readonly envelope: Envelope;
  readonly entry: LogEntry;
}
