// §15 The pool directory on disk: the signed descriptor, the ledger as a log of the host's
// append-only log primitive (poollog.ts, jcp §4.3), and one folder per item.
//   <dir>/pool.json                 the signed descriptor (§15.1)
//   <dir>/ledger/                   the ledger: a log folder, each entry one operation's envelopes (§15.2)
//   <dir>/items/<item>/workspace/   the item's pre-created workspace
//   <dir>/items/<item>/proc.json    the item's idle process, when the host keeps one
// No pool lock: appends are compare-and-append on the log's head, and an item's folder is made by
// one exclusive mkdir(2) (pool.ts), so no operation needs another to wait.
import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** Paths of a pool directory. */
export function poolPaths(dir: string) {
  return {
    descriptor: join(dir, "pool.json"),
    ledger: join(dir, "ledger"),
    items: join(dir, "items"),
    item: (id: string) => join(dir, "items", id),
    workspace: (id: string) => join(dir, "items", id, "workspace"),
    proc: (id: string) => join(dir, "items", id, "proc.json"),
  };
}

/** writeFileDurably: the store's crash-safe whole-file write (temp, fsync, rename, fsync of the folder). */
export { writeFileDurably } from "../store/durable.ts";

/** ensureDir creates a directory (and parents). */
export function ensureDir(p: string): void {
  mkdirSync(p, { recursive: true });
}
