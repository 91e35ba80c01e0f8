// §8.2 Files a unit wrote: the workspace is scanned before and after the interval, and every regular
// file that is new or whose size, mtime or inode changed is journaled by the digest of its content.
import { lstatSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import type { Journal } from "@sbx/sandbox-attest/journal";
import { digestFile } from "./program.ts";

/** What identifies a file's version between two scans. */
type Stamp = string;

/** Most entries a scan visits; a larger workspace is a RangeError (use a snapshot, §13, instead). */
export const MAX_SCAN_ENTRIES = 100_000;

/** scanFiles maps each regular file under `root` (relative path, '/'-separated) to its stamp. */
export function scanFiles(root: string): Map<string, Stamp> {
  const out = new Map<string, Stamp>();
  let seen = 0;
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (++seen > MAX_SCAN_ENTRIES)
        throw new RangeError(`scanFiles: more than ${MAX_SCAN_ENTRIES} entries under ${root}`);
      const p = join(dir, name);
      const st = lstatSync(p, { bigint: true });
      if (st.isDirectory()) walk(p);
      else if (st.isFile())
        out.set(relative(root, p).split("\\").join("/"), `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`);
    }
  };
  walk(root);
  return out;
}

/**
 * journalWrites appends a `file.write` event for every regular file under `root` that is absent
 * from `before` or whose stamp changed, in path order, with the digest and size of its content now.
 */
export function journalWrites(journal: Journal, root: string, before: ReadonlyMap<string, Stamp>): void {
  const after = scanFiles(root);
  for (const [path, stamp] of [...after].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (before.get(path) === stamp) continue;
    const full = join(root, path);
    journal.append({
      type: "file.write",
      path,
      digest: digestFile(full),
      size: String(lstatSync(full).size),
    });
  }
}
