// @sbx/host/run — a real child process run as one attested, metered, journaled interval of a unit.
export { runUnit } from "./run.ts";
export { runGranted } from "./granted.ts";
export type { GrantedRun } from "./granted.ts";
export { runSummary, writeRunFiles } from "./summary.ts";
export type { RunSummary } from "./summary.ts";
export type { GateReport, LiveCheck, RunUnitOptions, RunUnitResult } from "./run.ts";
export { resolveProgram, programInSandbox, digestFile } from "./program.ts";
export { findInside, lookupInside, sandboxView, type FoundInside, type SandboxView } from "./view.ts";
export type { Resolved } from "./program.ts";
export { StreamRecorder, DEFAULT_CHUNK_BYTES } from "./stdio.ts";
export type { StreamSummary } from "./stdio.ts";
export { scanFiles, journalWrites, MAX_SCAN_ENTRIES } from "./files.ts";
export { runScript } from "./script.ts";
export type { ScriptOptions } from "./script.ts";
