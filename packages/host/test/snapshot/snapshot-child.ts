// Snapshots a workspace into a store and prints the root (statcache.test.ts counts its fsync steps).
import { FileStore } from "../../src/store/index.ts";
import { snapshotDir } from "../../src/snapshot/index.ts";

const [root, ws] = process.argv.slice(2) as [string, string];
process.stdout.write(`${snapshotDir(FileStore.open(root), ws).fs_root}\n`);
