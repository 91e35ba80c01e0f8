// §13 Durable run records: segments, the hash chain, phase rules, wire form, resume preconditions
// and energy totals.
export { parseSegment, parseSnapshotRef, snapshotAddress } from "./segment.ts";
export type {
  Segment,
  ExecutedSegment,
  SuspendedSegment,
  ResumedSegment,
  ClosedSegment,
  MovedSegment,
  SnapshotRef,
  Provenance,
  CloseOutcome,
} from "./segment.ts";
export { applySegment, GENESIS_STATE } from "./phase.ts";
export { MOVED_PAYLOAD_TYPE, checkHandoff, movedMessage, signHandoff } from "./handoff.ts";
export type { Phase, PhaseState } from "./phase.ts";
export { RUNRECORD_TAG, RunRecord, runGenesis, segmentHead } from "./record.ts";
export {
  RECORD_LINE_MAX,
  continueRecord,
  decodeRecord,
  encodeHeader,
  encodeRecord,
  encodeSegmentLine,
} from "./wire.ts";
export type { Continued, DecodedRecord, DecodeOptions, RecordHeader } from "./wire.ts";
export { readSegmentLine, segmentJcs } from "./line.ts";
export type { FastLine } from "./line.ts";
export { checkResume, refuseMoved, resumedSegment } from "./resume.ts";
export type { EnvironmentCheck, IdleEnergy } from "./resume.ts";
export { runEnergy } from "./energy.ts";
export type { ActiveEnergyOf, RunEnergy } from "./energy.ts";
export { SandboxAttestError, isSandboxAttestError } from "../errors.ts";
export type { SandboxAttestErrorCode } from "../errors.ts";
export {
  FS_DIR_FORMAT,
  MAX_DIR_BYTES,
  MAX_DIR_ENTRIES,
  MAX_TREE_DEPTH,
  encodeFsDir,
  isEntryName,
  parseFsDir,
  walkFsTree,
} from "./fstree.ts";
export type { FsDir, FsEntry, FsKind, FsTreeAccess, FsTreeStats } from "./fstree.ts";
