// The stores a host runs on (§13.7, §15): the run store selected by flag, environment or default (a folder or PostgreSQL), pool stores, run references.
export { withPg, resolvePgRun } from "./pgruns.ts";
export { poolStoreDir, poolsDir, withPoolLedger } from "./poolstore.ts";
export { resolveRun, resolveStoreRun, resolveRunIn, namesRun } from "./runref.ts";
export {
  runStoreUrl,
  runStoreDir,
  openRunStore,
  openStore,
  closeStore,
  hostLocalDir,
  openAnyRunStore,
  storeArgOf,
  snapshotRun,
  restoreRun,
  readableRunStore,
} from "./runstore.ts";
export type { RunStore } from "./runstore.ts";
