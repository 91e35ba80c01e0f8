// @sbx/conformance: the harness of sandbox-attest §10–§11 and jcp §5 as a library. The command
// line (`npm run conformance`) is main.ts; the JSON-lines server an adapter talks to is serve.ts.
export { loadClasses, classNumber } from "./registry.ts";
export { runClass, judge, readVectorFile } from "./run.ts";
export type { ClassTally, VectorFile } from "./run.ts";
export { inProcessAdapter, handlerTable, runHandler } from "./adapter/inproc.ts";
export { repoRoot } from "./paths.ts";
export { subprocessAdapter } from "./adapter/subprocess.ts";
export { runBattery } from "./live/execgate.ts";
export type {
  Adapter,
  ClassId,
  ConformanceClass,
  Expect,
  Handler,
  LiveCase,
  OpResult,
  Vector,
} from "./types.ts";
