// §13.7 The store interface and an in-memory store; the file-backed store is @sbx/host/store.
export { checkObject, openSigned } from "./types.ts";
export type { ObjectStore, RecordStore, Store } from "./types.ts";
export { MemoryStore } from "./memory.ts";
export { readRun, resumeRun } from "./run.ts";
export type { ResumeRequest } from "./run.ts";
export { verifyRun } from "./verifyrun.ts";
export type { RunChecked, RunObjects, RunVerification, VerifyRunOptions } from "./verifyrun.ts";
