// @sbx/host/sandbox — §5 the reference sandbox: bubblewrap, a run cgroup, a seccomp filter.
export {
  startSandbox,
  sandboxUnavailableReason,
  DEFAULT_HOST_UID,
  DEFAULT_TMP_BYTES,
  DEFAULT_WORKSPACE_BYTES,
  SANDBOX_PATH,
} from "./sandbox.ts";
export type { Sandbox, SandboxExit, SandboxOptions, Provided } from "./sandbox.ts";
export {
  resolveSpec,
  systemContents,
  launchArgv,
  providedFacts,
  makeRunCgroup,
  runCgroupName,
  SANDBOX_HOSTNAME,
} from "./plan.ts";
export type { SandboxSpec, ResolvedSpec, LaunchParts } from "./plan.ts";
export {
  createRunCgroup,
  killRunCgroup,
  removeRunCgroup,
  holdRunCgroup,
  removeCgroupDir,
  limitHits,
  cgroupProcs,
  hostHierarchies,
  parseHierarchies,
  DEFAULT_LIMITS,
} from "./cgroup.ts";
export type { Hierarchies, LimitHits, Limits, RunCgroup } from "./cgroup.ts";
export {
  seccompProgram,
  filterInstructions,
  DENIED_X86_64,
  AUDIT_ARCH_X86_64,
  CLONE_NEW_MASK,
} from "./seccomp.ts";
export { bwrapArgs, launcherArgv, LAUNCH_PATH, TOOLS } from "./bwrap.ts";
export type { BwrapPlan, LaunchPaths } from "./bwrap.ts";
export { sandboxUser, systemEntries, etcFiles, writeEtc, sharedSystemDir, DEFAULT_USER } from "./system.ts";
export type { SandboxUser, SystemEntry } from "./system.ts";
export { handWorkspace, workspaceBytes, MAX_WORKSPACE_ENTRIES } from "./workspace.ts";
export { boundWorkspace, diskImagePath, recoverWorkspace, writeBack, workspaceFull } from "./disk.ts";
export type { BoundWorkspace } from "./disk.ts";
export { providedLevel, statedLevel } from "./level.ts";
export type { LevelFacts } from "./level.ts";
