// @sbx/host/durable — §13 durable runs on this host: a live sandbox across intervals, the freezer,
// idle energy of what a parked run retains, the run lock, the manifest check at resume, the one
// sealing of an interval (live or recovered), and the recovery of a run whose supervisor died.
export { LiveSandbox } from "./session.ts";
export type { LiveOptions, SealedInterval } from "./session.ts";
export { sealInterval } from "./seal.ts";
export type { SealInput, Sealed } from "./seal.ts";
export { orphanOf, recoverOrphan, recoverRun, supervisorState, supervisorText } from "./recover.ts";
export type { Recovered, SupervisorState } from "./recover.ts";
export { freezeTarget, freezeProcesses, thawProcesses, isFrozen, residentBytes } from "./freezer.ts";
export type { FreezeTarget } from "./freezer.ts";
export { idleEnergy, IDLE_SOURCE } from "./idle.ts";
export type { Retained } from "./idle.ts";
export { takeRunLock, lockHolder, startTicks } from "./lock.ts";
export type { RunLock } from "./lock.ts";
export { readVerifiedRun } from "./record.ts";
export { keepJournal } from "./journal.ts";
export type { VerifiedRun } from "./record.ts";
export { hostOffer, checkEnvironment, storeManifest, NO_MANIFEST } from "./environment.ts";
export { unitCites, unitCitesOf, EXEC_POLICY_LABEL, GRANT_CHAIN_LABEL } from "./cited.ts";
export { IntervalJournal, attachLiveGate } from "./gated.ts";
export type { HeldGate, LiveGateOptions } from "./gated.ts";
export { watchInterval } from "./livecheck.ts";
export type { IntervalWatch } from "./livecheck.ts";
export { serveControl, askSupervisor, Unanswerable } from "./control.ts";
export type { ControlRequest } from "./control.ts";
export { runPaths, writeInfo, readInfo, defaultKeyPath, hostKeyOf, runRecordPath } from "./paths.ts";
export type { RunPaths, RunKeyRef, RunInfo } from "./paths.ts";
export { Supervisor, closeOutcome } from "./supervisor.ts";
export type { SupervisorInit, Governance, SupervisorEnd } from "./supervisor.ts";
export { storePolicy, policyOfRun } from "./policy.ts";
export type { RunPolicy } from "./policy.ts";
export { storeChain, idleCites, reconcile, mayResume, governanceOf } from "./granted.ts";
export type { Reconciled } from "./granted.ts";
export {
  SUPERVISOR_LOST,
  dropOpenInterval,
  endOrphan,
  lastReading,
  openInterval,
  readOpenInterval,
  removeOrphanCgroups,
  supervisorGone,
  writeOpenInterval,
} from "./orphan.ts";
export type { OpenInterval } from "./orphan.ts";
export { waitRun, waitText, outcomeLine, liveRuns } from "./watch.ts";
export type { WaitEnd, WaitOptions, LiveRun } from "./watch.ts";
