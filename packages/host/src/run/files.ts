// §8.2 Files a unit wrote: the workspace is scanned before and after the interval, and every regular
// file that is new or whose size, mtime or inode changed is journaled by the digest of its content.
import type { Journal } from "@sbx/sandbox-attest/journal";
import { digestAt, scanTreeAt } from "../fsat/index.ts";

/** What identifies a file's version between two scans. */
type Stamp = string;

/** Most entries a scan visits; a larger workspace is a RangeError (use a snapshot, §13, instead). */
export const MAX_SCAN_ENTRIES = 100_000;

/** scanFiles maps each regular file under `root` (relative path, '/'-separated) to its stamp. */
export function scanFiles(root: string): Map<string, Stamp> {
  return scanTreeAt(root, MAX_SCAN_ENTRIES); // by directory descriptor, never through a link (§12)
}

/**
 * journalWrites appends a `file.write` event for every regular file under `root` that is absent
 * from `before` or whose stamp changed, in path order, with the digest and size of its content now.
 */
export function journalWrites(journal: Journal, root: string, before: ReadonlyMap<string, Stamp>): void {
  const after = scanFiles(root);
  for (const [path, stamp] of [...after].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (before.get(path) === stamp) continue;
    const got = digestAt(root, path); // digest and size from the one descriptor opened, no link followed
    if (got === null) continue; // no longer a regular file: nothing of it to journal
    journal.append({ type: "file.write", path, digest: got.digest, size: String(got.size) });
  }
}
