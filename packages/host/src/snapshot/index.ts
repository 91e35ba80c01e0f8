// §13.8 Workspace snapshots: snapshot a directory into the file store, restore one verified.
export { snapshotDir } from "./snapshot.ts";
export type { SnapshotResult } from "./snapshot.ts";
export { restoreSnapshot } from "./restore.ts";
export { hashStoredObject, verifyStoredTree } from "./verify.ts";
