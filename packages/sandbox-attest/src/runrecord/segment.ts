// §13.2 Segments: the four kinds a run record holds, their exact JSON members, and the strict
// reader that refuses any other shape before a segment can enter a chain.
import {
  addressOf,
  FORBIDDEN_KEYS,
  fromBase64,
  isDidKey,
  toBase64,
  isAmount,
  isDigest,
  type Amount,
  type Digest,
  type Json,
} from "@sbx/wire";
import { PROVENANCES, type Provenance } from "../energy/types.ts";
import { SandboxAttestError } from "../errors.ts";

export type { Provenance };
/** Why a run was closed (§13.2). */
export type CloseOutcome = "completed" | "failed" | "abandoned";

/** §13.2 What a parked run retains: filesystem root, memory image if retained, manifest address. */
export interface SnapshotRef {
  readonly fs_root: Digest;
  readonly memory?: Digest;
  readonly manifest: Digest;
}

/** One active interval, recorded only by the content address of its attestation (§7). */
export interface ExecutedSegment {
  readonly kind: "executed";
  readonly attestation: Digest;
}

/** The run parked, retaining `snapshot`. */
export interface SuspendedSegment {
  readonly kind: "suspended";
  readonly snapshot: SnapshotRef;
  readonly at_ms: number;
}

/** The run un-parked from `snapshot`; `idle_uj` is what the retained state drew while parked. */
export interface ResumedSegment {
  readonly kind: "resumed";
  readonly snapshot: SnapshotRef;
  readonly at_ms: number;
  readonly idle_uj: Amount;
  readonly idle_provenance: Provenance;
  /** The meter or model that produced `idle_uj` (§6.3), e.g. "model:ccf-storage". */
  readonly idle_source: string;
  /** The stated ratio (attributed) or model coefficients (estimated), as decimal strings. */
  readonly idle_basis?: Readonly<Record<string, string>>;
}

/** The run ended; allowed at any point, parked included. */
export interface ClosedSegment {
  readonly kind: "closed";
  readonly at_ms: number;
  readonly outcome: CloseOutcome;
}

/**
 * The parked run was handed off to another store or host (§13.2a): nothing may follow it here.
 * `head` is the head handed off (the record's head before this segment), `to` names where the run
 * went, and `sig` is `signer`'s Ed25519 signature over the hand-off (movedMessage).
 */
export interface MovedSegment {
  readonly kind: "moved";
  readonly at_ms: number;
  readonly head: Digest;
  readonly to: string;
  readonly signer: string;
  readonly sig: string;
}

/** Any segment of a run record. */
export type Segment = ExecutedSegment | SuspendedSegment | ResumedSegment | ClosedSegment | MovedSegment;

const TO_MAX = 256;
const OUTCOMES: ReadonlySet<string> = new Set(["completed", "failed", "abandoned"]);
const SOURCE_MAX = 256;
const BASIS_MAX = 32;

function bad(msg: string): never {
  throw new SandboxAttestError("BadSegment", msg);
}

function asObject(v: unknown, what: string): Record<string, Json> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad(`${what} is not an object`);
  return v as Record<string, Json>;
}

function exactKeys(
  o: Record<string, unknown>,
  required: readonly string[],
  optional: readonly string[],
  what: string,
): void {
  for (const k of required) if (!Object.hasOwn(o, k)) bad(`${what} lacks ${k}`);
  for (const k of Object.keys(o))
    if (!required.includes(k) && !optional.includes(k))
      bad(`${what} has unknown member ${JSON.stringify(k)}`);
}

function digest(v: unknown, what: string): Digest {
  if (!isDigest(v)) bad(`${what} is not a blake3 digest`);
  return v;
}

function timeMs(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
    bad(`${what} is not a non-negative integer of milliseconds`);
  return v;
}

/** parseSnapshotRef reads a snapshot reference (§13.2); throws `BadSegment` on any other shape. */
export function parseSnapshotRef(v: unknown): SnapshotRef {
  const o = asObject(v, "snapshot");
  exactKeys(o, ["fs_root", "manifest"], ["memory"], "snapshot");
  const ref = {
    fs_root: digest(o.fs_root, "snapshot.fs_root"),
    manifest: digest(o.manifest, "snapshot.manifest"),
  };
  return o.memory === undefined ? ref : { ...ref, memory: digest(o.memory, "snapshot.memory") };
}

/** snapshotAddress is a snapshot reference's identity: the address of its canonical form (§13.3). */
export function snapshotAddress(ref: SnapshotRef): Digest {
  return addressOf(ref);
}

function parseBasis(v: unknown): Record<string, string> {
  const o = asObject(v, "idle_basis");
  const keys = Object.keys(o);
  if (keys.length === 0 || keys.length > BASIS_MAX) bad(`idle_basis holds 1 to ${BASIS_MAX} members`);
  const out: Record<string, string> = {};
  for (const k of keys) {
    const x = o[k];
    if (FORBIDDEN_KEYS.has(k) || typeof x !== "string" || !/^\d+(\.\d+)?$/.test(x))
      bad(`idle_basis.${k} is not a decimal string`);
    out[k] = x;
  }
  return out;
}

function parseResumed(o: Record<string, Json>): ResumedSegment {
  exactKeys(
    o,
    ["kind", "snapshot", "at_ms", "idle_uj", "idle_provenance", "idle_source"],
    ["idle_basis"],
    "resumed segment",
  );
  if (!isAmount(o.idle_uj)) bad("idle_uj is not a decimal amount");
  const prov = o.idle_provenance;
  if (typeof prov !== "string" || !(PROVENANCES as readonly string[]).includes(prov))
    bad("idle_provenance is not measured, attributed or estimated");
  const src = o.idle_source;
  if (typeof src !== "string" || src.length === 0 || src.length > SOURCE_MAX)
    bad(`idle_source is not a string of 1 to ${SOURCE_MAX} characters`);
  if (prov !== "measured" && o.idle_basis === undefined) bad(`${prov} idle energy must state its idle_basis`);
  const seg = {
    kind: "resumed" as const,
    snapshot: parseSnapshotRef(o.snapshot),
    at_ms: timeMs(o.at_ms, "at_ms"),
    idle_uj: o.idle_uj,
    idle_provenance: prov as Provenance,
    idle_source: src,
  };
  return o.idle_basis === undefined ? seg : { ...seg, idle_basis: parseBasis(o.idle_basis) };
}

function parseMoved(o: Record<string, Json>): MovedSegment {
  exactKeys(o, ["kind", "at_ms", "head", "to", "signer", "sig"], [], "moved segment");
  const to = o.to;
  if (typeof to !== "string" || to.length === 0 || to.length > TO_MAX || !to.isWellFormed())
    bad(`to is not a string of 1 to ${TO_MAX} characters`);
  if (!isDidKey(o.signer)) bad("signer is not an Ed25519 did:key");
  const sig = o.sig;
  const raw = typeof sig === "string" ? fromBase64(sig) : null;
  if (raw === null || raw.length !== 64 || toBase64(raw) !== sig)
    bad("sig is not 64 bytes in canonical padded base64");
  return {
    kind: "moved",
    at_ms: timeMs(o.at_ms, "at_ms"),
    head: digest(o.head, "head"),
    to,
    signer: o.signer,
    sig,
  };
}

/**
 * parseSegment reads one segment (§13.2) from parsed JSON, refusing unknown kinds, missing or extra
 * members, malformed digests, amounts, times and provenance with `BadSegment`.
 */
export function parseSegment(v: unknown): Segment {
  const o = asObject(v, "segment");
  switch (o.kind) {
    case "executed":
      exactKeys(o, ["kind", "attestation"], [], "executed segment");
      return { kind: "executed", attestation: digest(o.attestation, "attestation") };
    case "suspended":
      exactKeys(o, ["kind", "snapshot", "at_ms"], [], "suspended segment");
      return { kind: "suspended", snapshot: parseSnapshotRef(o.snapshot), at_ms: timeMs(o.at_ms, "at_ms") };
    case "resumed":
      return parseResumed(o);
    case "closed":
      exactKeys(o, ["kind", "at_ms", "outcome"], [], "closed segment");
      if (typeof o.outcome !== "string" || !OUTCOMES.has(o.outcome))
        bad("outcome is not completed, failed or abandoned");
      return { kind: "closed", at_ms: timeMs(o.at_ms, "at_ms"), outcome: o.outcome as CloseOutcome };
    case "moved":
      return parseMoved(o);
    default:
      return bad(`unknown segment kind ${JSON.stringify(o.kind)}`);
  }
}
