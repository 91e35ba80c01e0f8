// The JCP logs on disk (jcp §4.3–§4.7): spend ledgers, mint logs, checkpoint logs, on the one append-only log.
export { readCheckpointLog, appendCheckpoint, CheckpointFollower } from "./checkpointlog.ts";
export { amendedLeaf } from "./grantamend.ts";
export {
  readLedger,
  readLogJson,
  appendLogJson,
  appendLedger,
  readLedgerFrom,
  appendLedgerAt,
} from "./ledger.ts";
export { ledgerOf, replayLedger, spendOnLog } from "./ledgerstore.ts";
export { ledgerReport, ledgerReportOf } from "./ledgerverify.ts";
export { readMintLog, mintOn } from "./mintlog.ts";
export { verifiedLedger, spendOn } from "./spender.ts";
export type { CheckpointEntries } from "./checkpointlog.ts";
export type { LedgerState, LedgerTail } from "./ledger.ts";
export type { GrantStanding, LedgerReport } from "./ledgerverify.ts";
export type { MintLog, MintResult } from "./mintlog.ts";
export type { VerifiedLedger, SpendResult } from "./spender.ts";
