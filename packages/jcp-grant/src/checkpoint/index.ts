// @sbx/jcp-grant/checkpoint: checkpoints and amendments (jcp §4.7): the holder's checkpoints and the
// issuer's tightening amendments in one hash-chained log, and the grant in force they yield.
export {
  CHECKPOINT_PAYLOAD_TYPE,
  AMENDMENT_PAYLOAD_TYPE,
  CHECKPOINT_LOG_TAG,
  checkEntryPayload,
  openLogEntry,
} from "./form.ts";
export type {
  SpentFields,
  CheckpointPayload,
  AmendmentSet,
  AmendmentPayload,
  LogEntry,
  SignedEntry,
} from "./form.ts";
export { applyAmendment, assertTightens, CheckpointLog } from "./log.ts";
export type { CheckpointFields } from "./log.ts";
