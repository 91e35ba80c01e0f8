// §13.7 The file-backed store (the embedded default) and its crash-safety primitives.
export { FileStore, STORE_FORMAT } from "./filestore.ts";
export { writeFileDurably } from "./durable.ts";
export type { OpenStoreOptions } from "./filestore.ts";
export { recordPaths } from "./records.ts";
export type { SettleReport } from "./records.ts";
export { verifyRecordFiles, verifyRunFile, reportOf, storeObjects, isHeadArg } from "./verifyfiles.ts";
export type { FilesReport, SegmentReport, VerifyFilesOptions } from "./verifyfiles.ts";
export { faultPoint } from "./fault.ts";
