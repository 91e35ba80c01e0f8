// @sbx/host/standing — standing grants drive runs (jcp §4.6): the driver that mints a child per
// event and runs a command under each, the run log that loses no minted child, the child's run.
export { StandingDriver, MAX_EVENT_BYTES } from "./driver.ts";
export type {
  ChildRun,
  ChildRunOutcome,
  DriverSummary,
  EventResult,
  StandingDriverOptions,
} from "./driver.ts";
export { childRunner } from "./childrun.ts";
export type { ChildRunOptions } from "./childrun.ts";
export { runLogOf, mintedRuns, claimRun, endRun, isAlive, ownHolder } from "./runlog.ts";
export type { ChildState, MintedRun, RunEnd, RunHolder } from "./runlog.ts";
