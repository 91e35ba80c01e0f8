// §13.7 The PostgreSQL store shared by many hosts: run records, ledgers and objects, its schema
// migrations, and a throwaway cluster for tests and benches.
export { PgStore } from "./pgstore.ts";
export { PgLogStore } from "./pglog.ts";
export { COLD_READ_SQL } from "./reader.ts";
export { SharedRunStore } from "./shared.ts";
export type { TreeTransfer } from "./shared.ts";
export { CHUNK_BYTES } from "./objects.ts";
export type { PutResult } from "./objects.ts";
export { isPgUrl, redactUrl } from "./conn.ts";
export type { PgOptions } from "./conn.ts";
export { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
export {
  freePort,
  pgBin,
  restartCluster,
  restartClusterAsync,
  startCluster,
  startServer,
  stopCluster,
  stopServer,
} from "./cluster.ts";
export type { TestCluster } from "./cluster.ts";
export { copyStore, listRecords } from "./copy.ts";
export { importRecord } from "./importrecord.ts";
export type { RecordImport } from "./importrecord.ts";
export type { AnyStore, CopyReport } from "./copy.ts";
export { copyLogs, listLogs, logsRoot, logStoreOf } from "./copylogs.ts";
export type { LogCopyReport } from "./copylogs.ts";
export { PgObjectCache, verifyPgRun } from "./runview.ts";
export type { PgRunVerification, RawObjects } from "./runview.ts";
