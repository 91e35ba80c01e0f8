// §13.3 Phase alternation: execute* while active; suspend parks; only a resume of the very
// snapshot recorded at suspension un-parks; close ends the run from any phase; nothing follows close.
import { SandboxAttestError } from "../errors.ts";
import { snapshotAddress, type Segment, type SnapshotRef } from "./segment.ts";

/** Where a run stands after its last segment. */
export type Phase = "active" | "parked" | "closed" | "moved";

/** The state the phase rules need: the phase, the parked snapshot, the latest stated time. */
export interface PhaseState {
  readonly phase: Phase;
  /** The snapshot recorded by the suspension now in force (parked only). */
  readonly parked: SnapshotRef | null;
  /** The latest `at_ms` seen, or null before any timed segment. */
  readonly lastMs: number | null;
  /** Where the run went, once a `moved` segment handed it off (§13.2a); null before. */
  readonly movedTo: string | null;
}

/** The state at genesis: active, nothing parked, no time yet. */
export const GENESIS_STATE: PhaseState = {
  phase: "active",
  parked: null,
  lastMs: null,
  movedTo: null,
};

function checkTime(state: PhaseState, atMs: number): void {
  if (state.lastMs !== null && atMs < state.lastMs)
    throw new SandboxAttestError(
      "TimeRegression",
      `at_ms ${atMs} precedes the previous segment's ${state.lastMs}`,
    );
}

/**
 * applySegment returns the state after `seg` (§13.3). Refuses any segment after close
 * (`RecordClosed`), execution or a second suspension while parked and a resume while active
 * (`PhaseViolation`), any segment after a hand-off (`RunMoved`, naming where the run went), a
 * hand-off of a run that is not parked (`PhaseViolation`), a resume whose snapshot differs by address from the one recorded at
 * suspension (`SnapshotMismatch`), and a stated time earlier than the previous one (`TimeRegression`).
 */
export function applySegment(state: PhaseState, seg: Segment): PhaseState {
  if (state.phase === "closed")
    throw new SandboxAttestError("RecordClosed", `a ${seg.kind} segment cannot follow close`);
  if (state.movedTo !== null)
    throw new SandboxAttestError(
      "RunMoved",
      `the run moved to ${JSON.stringify(state.movedTo)}: a ${seg.kind} segment cannot follow its hand-off`,
    );
  switch (seg.kind) {
    case "executed":
      if (state.phase === "parked") throw new SandboxAttestError("PhaseViolation", "execution while parked");
      return state;
    case "suspended":
      if (state.phase === "parked")
        throw new SandboxAttestError("PhaseViolation", "suspension while already parked");
      checkTime(state, seg.at_ms);
      return { phase: "parked", parked: seg.snapshot, lastMs: seg.at_ms, movedTo: null };
    case "resumed":
      if (state.phase !== "parked" || state.parked === null)
        throw new SandboxAttestError("PhaseViolation", "resume of a run that is not parked");
      if (snapshotAddress(seg.snapshot) !== snapshotAddress(state.parked))
        throw new SandboxAttestError(
          "SnapshotMismatch",
          `resumed snapshot ${snapshotAddress(seg.snapshot)}, recorded ${snapshotAddress(state.parked)}`,
        );
      checkTime(state, seg.at_ms);
      return { phase: "active", parked: null, lastMs: seg.at_ms, movedTo: null };
    case "closed":
      checkTime(state, seg.at_ms);
      return { phase: "closed", parked: state.parked, lastMs: seg.at_ms, movedTo: null };
    case "moved":
      if (state.phase !== "parked")
        throw new SandboxAttestError("PhaseViolation", "a hand-off of a run that is not parked");
      checkTime(state, seg.at_ms);
      return { phase: "moved", parked: state.parked, lastMs: seg.at_ms, movedTo: seg.to };
  }
}
