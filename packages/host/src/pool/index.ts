// @sbx/host/pool — §15 warm pools on this host: real pooled items and their signed ledger on disk.
export {
  createPoolDir,
  provisionItems,
  openPoolDir,
  claimPoolItem,
  evictPoolItem,
  closePoolDir,
  listPool,
  destroyPoolDir,
  claimPoolItemOn,
  evictPoolItemOn,
  closePoolOn,
  listPoolOn,
} from "./pool.ts";
export type { CreatePoolOptions, Claimed, ClaimOptions, ItemView } from "./pool.ts";
export { folderLedger, logStoreLedger, poolLogName } from "./ledger.ts";
export type { PoolDecision, PoolLedger } from "./ledger.ts";
export { ledgerAtPath } from "./ledgerat.ts";
export { poolPaths } from "./files.ts";
export { forgetHeldPools, lastHeldOpen, openPoolLog, poolLogDir, FULL_EVERY } from "./poollog.ts";
export type { HeldOpenStats, PoolLog } from "./poollog.ts";
export { provisionFigure, residencyFigure } from "./figures.ts";
export type { Residency } from "./figures.ts";
export { isAlive, diskBytes } from "./idle.ts";
export { runClaimed } from "./run.ts";
export { claimAndRun } from "./claimrun.ts";
export type { ClaimAndRunOptions, ClaimRunResult } from "./claimrun.ts";
export { checkClaimGrant, claimWatch, debitClaim, CLAIM_WORKSPACE } from "./claimgrant.ts";
export type { ClaimedRun } from "./run.ts";
export {
  claimSandbox,
  parkSandbox,
  parkedAlive,
  parkedFrozen,
  readParked,
  parkedSandboxOptions,
  destroyParked,
  quoteArgv,
  CLAIM_DIR,
} from "./parked.ts";
export type { ClaimedSandbox, ParkedImage, ParkedInfo, ParkOptions } from "./parked.ts";
export { poolPinnedImage, writePoolEnvironment } from "./environment.ts";
