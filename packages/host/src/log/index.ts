// The append-only log of chained ledgers: one claimed head per entry (jcp §4.3).
export { appendLog, createLog, isLog, LOG_GENESIS, readLog } from "./appendlog.ts";
export type { LogEntry, LogState } from "./appendlog.ts";
export { FileLogStore, checkLogName, logEntryBytes } from "./logstore.ts";
export type { LogBuilder, LogStore } from "./logstore.ts";
