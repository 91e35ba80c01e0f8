// §13.1 The run record: an append-only hash chain of segments bound at genesis to one unit and one
// grant set. head₀ = BLAKE3("sandbox.runrecord/1" ‖ unit_id ‖ grants_id), headₙ = BLAKE3(headₙ₋₁ ‖ JCS(segmentₙ)).
import {
  blake3,
  canonicalBytes,
  createBlake3Chunk,
  SMALL_INPUT_MAX,
  chainGenesis,
  chainNextBytes,
  concatBytes,
  formatDigest,
  isDigest,
  parseDigest,
  type Digest,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { checkHandoff } from "./handoff.ts";
import { applySegment, GENESIS_STATE, type Phase, type PhaseState } from "./phase.ts";
import { parseSegment, type Segment, type SnapshotRef } from "./segment.ts";

/** The domain tag of the run record chain (§13.1). */
export const RUNRECORD_TAG = "sandbox.runrecord/1";

/** runGenesis returns head₀ of the run of `unitId` under `grantsId` (§13.1). */
export function runGenesis(unitId: Digest, grantsId: Digest): Digest {
  if (!isDigest(unitId)) throw new TypeError("runGenesis: unitId must be a digest");
  if (!isDigest(grantsId)) throw new TypeError("runGenesis: grantsId must be a digest");
  return chainGenesis(RUNRECORD_TAG, [unitId, grantsId]);
}

// One-chunk hasher for the chain step: head (32 raw bytes) ‖ segment JCS is built in its own
// buffer, so an append copies the segment's bytes once and allocates only the 32-byte result.
const step = createBlake3Chunk();

/** chainStep writes BLAKE3(prev ‖ src[from, to)) into `out` (§13.1); `out` may be `prev`. */
function chainStep(prev: Uint8Array, src: Uint8Array, from: number, to: number, out: Uint8Array): void {
  const len = 32 + to - from;
  if (len > SMALL_INPUT_MAX) {
    out.set(blake3(concatBytes(prev, src.subarray(from, to))));
    return;
  }
  const input = step.input;
  input.set(prev, 0);
  input.set(from === 0 && to === src.length ? src : src.subarray(from, to), 32);
  step.digestInto(len, out, 0);
}

// The next head of an append being checked, before it is accepted into a record.
const scratch = new Uint8Array(32);
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
// The step's input as 32-bit words (its buffer is its own, so word-aligned), written little-endian
// where the platform is: then the words hold the bytes in order.
const stepWords = new Int32Array(step.input.buffer, step.input.byteOffset, step.input.length >> 2);

/**
 * chainStepView is chainStep for a reader holding a DataView `dv` of a whole file: the JCS bytes
 * dv[from, to) are copied four at a time. Precondition: 32 + to − from ≤ SMALL_INPUT_MAX and dv
 * holds at least 3 bytes past `to` (a line's closing "}" and line feed), which are read and then
 * cleared by the hash's padding.
 */
function chainStepView(prev: Uint8Array, dv: DataView, from: number, to: number, out: Uint8Array): void {
  const input = step.input;
  input.set(prev, 0);
  if (LITTLE_ENDIAN) for (let i = from, w = 8; i < to; i += 4, w++) stepWords[w] = dv.getInt32(i, true);
  else for (let i = from, j = 32; i < to; i++, j++) input[j] = dv.getUint8(i);
  step.digestInto(32 + to - from, out, 0);
}

/** segmentHead returns headₙ from headₙ₋₁ and segmentₙ (§13.1). */
export function segmentHead(prev: Digest, seg: Segment): Digest {
  return chainNextBytes(prev, canonicalBytes(seg));
}

/**
 * createChecked is RunRecord.create for a caller that has just computed head₀ = runGenesis(unitId,
 * grantsId) itself (the record decoder, which checks the header's stated head against it), so the
 * hash is not computed twice. Internal to this package: not exported from its index.
 */
export let createChecked: (unitId: Digest, grantsId: Digest, genesis: Digest) => RunRecord;

/**
 * A run record in memory: its bound ids, segments, every head, and the phase state. Appends are
 * checked against §13.3 before anything changes, so a refused append leaves the record as it was.
 */
export class RunRecord {
  readonly unitId: Digest;
  readonly grantsId: Digest;
  readonly genesis: Digest;
  readonly #segments: Segment[] = [];
  readonly #heads: Digest[];
  #state: PhaseState = GENESIS_STATE;
  /** The current head's raw bytes, kept so an append does not re-parse the hex form (owned, updated in place). */
  readonly #raw: Uint8Array;

  private constructor(unitId: Digest, grantsId: Digest, genesis?: Digest) {
    this.unitId = unitId;
    this.grantsId = grantsId;
    this.genesis = genesis ?? runGenesis(unitId, grantsId);
    this.#heads = [this.genesis];
    this.#raw = parseDigest(this.genesis);
  }

  /** RunRecord.create starts a new run of `unitId` under `grantsId` (head₀ only). */
  static create(unitId: Digest, grantsId: Digest): RunRecord {
    return new RunRecord(unitId, grantsId);
  }

  static {
    createChecked = (unitId, grantsId, genesis) => new RunRecord(unitId, grantsId, genesis);
  }

  /**
   * RunRecord.fromSegments verifies a record from genesis (§13.4): every segment's shape, the phase
   * rules, and, when `heads` is given (headₙ for each segment), each recomputed head against it
   * (`HeadMismatch`). Throws the first refusal, naming the segment index.
   */
  static fromSegments(
    unitId: Digest,
    grantsId: Digest,
    segments: readonly unknown[],
    heads?: readonly Digest[],
  ): RunRecord {
    const r = new RunRecord(unitId, grantsId);
    if (heads !== undefined && heads.length !== segments.length)
      throw new RangeError("fromSegments: one head per segment");
    segments.forEach((s, i) => {
      // append holds the segment to the §13.2 wire form (parseSegment) itself.
      const head = withIndex(i + 1, () => r.append(s as Segment));
      const want = heads?.[i];
      if (want !== undefined && want !== head)
        throw new SandboxAttestError(
          "HeadMismatch",
          `segment ${i + 1}: recomputed head ${head}, stated ${want}`,
        );
    });
    return r;
  }

  /** fork returns an independent copy (a candidate continuation is checked on a fork). */
  fork(): RunRecord {
    const r = new RunRecord(this.unitId, this.grantsId);
    for (const seg of this.#segments) r.#segments.push(seg);
    for (const h of this.#heads.slice(1)) r.#heads.push(h);
    r.#state = this.#state;
    r.#raw.set(this.#raw);
    return r;
  }

  /** The current head (head₀ for an empty record). */
  get head(): Digest {
    return this.#heads[this.#heads.length - 1]!;
  }
  /** Every head, head₀ first. */
  get heads(): readonly Digest[] {
    return this.#heads;
  }
  /** The segments, in order. */
  get segments(): readonly Segment[] {
    return this.#segments;
  }
  /** active, parked or closed. */
  get phase(): Phase {
    return this.#state.phase;
  }
  /** The snapshot recorded by the suspension in force, or null when not parked. */
  get parkedSnapshot(): SnapshotRef | null {
    return this.#state.phase === "parked" ? this.#state.parked : null;
  }

  /** check throws what `append(seg)` would throw, changing nothing (§13.3). */
  check(given: Segment): void {
    const seg = parseSegment(given);
    applySegment(this.#state, seg);
    this.#handoff(seg);
  }

  /** Where the run went, once its record ends in a hand-off (§13.2a); null otherwise. */
  get movedTo(): string | null {
    return this.#state.movedTo;
  }

  // §13.2a: a hand-off names the head it follows and is signed; checked after the phase rules.
  #handoff(seg: Segment): void {
    if (seg.kind === "moved") checkHandoff(seg, formatDigest(this.#raw));
  }

  /**
   * peek returns the head `append(seg, canonical)` would return, after the same §13.3 checks,
   * changing nothing: a writer checks a candidate continuation (a claim) with it.
   */
  peek(given: Segment, canonical?: Uint8Array): Digest {
    const seg = parseSegment(given);
    applySegment(this.#state, seg);
    this.#handoff(seg);
    const c = canonical ?? canonicalBytes(seg);
    chainStep(this.#raw, c, 0, c.length, scratch);
    return formatDigest(scratch);
  }

  /**
   * appendStated is append for a reader that holds the segment's JCS bytes and the head its line
   * states: the segment is appended only when the recomputed head equals `stated`; otherwise nothing
   * changes and the recomputed head is returned for the refusal. Returns null on success. With
   * `from`/`to`, the JCS bytes are canonical[from, to) (a reader's view into a whole file); with
   * `statedAt`, the 64 hex digits of `stated` are also at canonical[statedAt, statedAt + 64), and
   * are compared there (`stated` must then be those digits' string, blake3: included).
   */
  appendStated(
    seg: Segment,
    canonical: Uint8Array,
    stated: Digest,
    from = 0,
    to = canonical.length,
    statedAt = -1,
  ): Digest | null {
    const next = applySegment(this.#state, seg);
    this.#handoff(seg);
    chainStep(this.#raw, canonical, from, to, scratch);
    const same = statedAt < 0 ? sameHex(scratch, stated) : sameHexAt(scratch, canonical, statedAt);
    if (!same || stated.length !== 71) return formatDigest(scratch);
    this.#raw.set(scratch);
    this.#state = next;
    this.#segments.push(seg);
    this.#heads.push(stated);
    return null;
  }

  /**
   * appendStatedView is appendStated for the fast reader of a whole file, `dv` a DataView of it:
   * the JCS bytes are dv[from, to), followed by at least 3 more bytes, and the 64 hex digits of
   * `stated` are at dv[statedAt…]. Returns true when appended; false, changing nothing, when the
   * recomputed head differs (or the ranges do not fit).
   */
  appendStatedView(
    seg: Segment,
    dv: DataView,
    from: number,
    to: number,
    statedAt: number,
    stated: Digest,
  ): boolean {
    const next = applySegment(this.#state, seg);
    this.#handoff(seg);
    if (to + 3 > dv.byteLength || 32 + to - from > SMALL_INPUT_MAX || statedAt + 64 > dv.byteLength)
      return false;
    chainStepView(this.#raw, dv, from, to, scratch);
    for (let i = 0; i < 32; i++) if (dv.getUint16(statedAt + 2 * i) !== HEX_PAIRS[scratch[i]!]) return false;
    if (stated.length !== 71) return false;
    this.#raw.set(scratch);
    this.#state = next;
    this.#segments.push(seg);
    this.#heads.push(stated);
    return true;
  }

  /**
   * append adds a segment after the §13.3 checks and returns the new head. `canonical`, when given,
   * MUST be the segment's JCS bytes (a reader that already holds them saves re-encoding).
   */
  append(given: Segment, canonical?: Uint8Array): Digest {
    // A writer's segment is held to the wire form (§13.2) as a reader's is: a record a store accepts
    // is one every reader can decode (an estimated idle figure without its basis was accepted here
    // and refused by decodeRecord).
    const seg = parseSegment(given);
    const next = applySegment(this.#state, seg);
    this.#handoff(seg);
    const c = canonical ?? canonicalBytes(seg);
    chainStep(this.#raw, c, 0, c.length, this.#raw);
    const head = formatDigest(this.#raw);
    this.#state = next;
    this.#segments.push(seg);
    this.#heads.push(head);
    return head;
  }
}

const HEX = "0123456789abcdef";
// sameHex: does `d` (blake3:<hex>) spell `raw`? Compared code by code, without building a string.
function sameHex(raw: Uint8Array, d: string): boolean {
  if (d.length !== 71) return false;
  for (let i = 0; i < 32; i++) {
    const x = raw[i]!;
    if (
      d.charCodeAt(7 + 2 * i) !== HEX.charCodeAt(x >> 4) ||
      d.charCodeAt(8 + 2 * i) !== HEX.charCodeAt(x & 15)
    )
      return false;
  }
  return d.startsWith("blake3:");
}

// Each byte's two lowercase hex digits as one big-endian 16-bit value (first digit high).
const HEX_PAIRS = Uint16Array.from(
  { length: 256 },
  (_, x) => (HEX.charCodeAt(x >> 4) << 8) | HEX.charCodeAt(x & 15),
);
// sameHexAt: do the 64 bytes at src[off…] spell `raw` in lowercase hex? Compared two digits at a time.
function sameHexAt(raw: Uint8Array, src: Uint8Array, off: number): boolean {
  if (off < 0 || off + 64 > src.length) return false;
  const dv = new DataView(src.buffer, src.byteOffset + off, 64);
  for (let i = 0; i < 32; i++) if (dv.getUint16(2 * i) !== HEX_PAIRS[raw[i]!]) return false;
  return true;
}

function withIndex<T>(i: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SandboxAttestError)
      throw new SandboxAttestError(e.code, `segment ${i}: ${e.reason}`, { cause: e, members: e.members });
    throw e;
  }
}
