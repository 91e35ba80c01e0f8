// @sbx/host/gate: the Linux exec gate of sandbox-attest §5.5 (fanotify, content-addressed).
export { startGate, runGated } from "./session.ts";
export type { GateOptions, GateResult, GateSession } from "./session.ts";
export type { GateStats } from "./protocol.ts";
export { UNKNOWN_PATH } from "./protocol.ts";
export { hashFile } from "./hash.ts";
export type { Hashed, StatKey } from "./hash.ts";
export { elfFacts } from "./elf.ts";
export type { ElfFacts } from "./elf.ts";
export { LoaderSet, candidateLoaders } from "./loaders.ts";
export {
  HELPER_PATH,
  ASAN_HELPER_PATH,
  EXECVEAT_PROBE_PATH,
  gateUnavailableReason,
  assertGateAvailable,
} from "./helper.ts";
export type { RunGate } from "./rungate.ts";
