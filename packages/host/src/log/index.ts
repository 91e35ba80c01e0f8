// The append-only log of chained ledgers: one claimed head per entry (jcp §4.3).
export {
  appendLog,
  appendLogAt,
  createLog,
  isLog,
  LOG_GENESIS,
  LOG_START,
  readLog,
  readLogFrom,
  sweepLogTemps,
} from "./appendlog.ts";
export type { LogEntry, LogMark, LogState } from "./appendlog.ts";
export { FileLogStore, checkLogName, logEntryBytes } from "./logstore.ts";
export type { LogBuilder, LogStore } from "./logstore.ts";
