// §13.1 The run record: an append-only hash chain of segments bound at genesis to one unit and one
// grant set. head₀ = BLAKE3("sandbox.runrecord/1" ‖ unit_id ‖ grants_id), headₙ = BLAKE3(headₙ₋₁ ‖ JCS(segmentₙ)).
import {
  blake3,
  canonicalBytes,
  chainGenesis,
  chainNextBytes,
  concatBytes,
  formatDigest,
  isDigest,
  parseDigest,
  type Digest,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
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

/** segmentHead returns headₙ from headₙ₋₁ and segmentₙ (§13.1). */
export function segmentHead(prev: Digest, seg: Segment): Digest {
  return chainNextBytes(prev, canonicalBytes(seg));
}

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
  /** The current head's raw bytes, kept so an append does not re-parse the hex form. */
  #raw: Uint8Array;

  private constructor(unitId: Digest, grantsId: Digest) {
    this.unitId = unitId;
    this.grantsId = grantsId;
    this.genesis = runGenesis(unitId, grantsId);
    this.#heads = [this.genesis];
    this.#raw = parseDigest(this.genesis);
  }

  /** RunRecord.create starts a new run of `unitId` under `grantsId` (head₀ only). */
  static create(unitId: Digest, grantsId: Digest): RunRecord {
    return new RunRecord(unitId, grantsId);
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
      const head = withIndex(i + 1, () => r.append(parseSegment(s)));
      const want = heads?.[i];
      if (want !== undefined && want !== head)
        throw new SandboxAttestError(
          "HeadMismatch",
          `segment ${i + 1}: recomputed head ${head}, stated ${want}`,
        );
    });
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
  check(seg: Segment): void {
    applySegment(this.#state, seg);
  }

  /**
   * append adds a segment after the §13.3 checks and returns the new head. `canonical`, when given,
   * MUST be the segment's JCS bytes (a reader that already holds them saves re-encoding).
   */
  append(seg: Segment, canonical?: Uint8Array): Digest {
    const next = applySegment(this.#state, seg);
    const raw = blake3(concatBytes(this.#raw, canonical ?? canonicalBytes(seg)));
    const head = formatDigest(raw);
    this.#raw = raw;
    this.#state = next;
    this.#segments.push(seg);
    this.#heads.push(head);
    return head;
  }
}

function withIndex<T>(i: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SandboxAttestError)
      throw new SandboxAttestError(e.code, `segment ${i}: ${e.message.replace(/^\w+: /, "")}`, { cause: e });
    throw e;
  }
}
