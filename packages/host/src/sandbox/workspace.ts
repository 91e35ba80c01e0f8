// §5.1, §5.3 The workspace: the one writable tree of a sandbox. It is handed to the sandbox's host
// uid before the run (the unit writes as that uid); its size is bounded as the unit writes (disk.ts)
// and checked after the run.
import { closeSync, fstatSync, lchownSync, type Stats } from "node:fs";
import { atPath, listAt, lstatAt, openDirAt, openRoot } from "../fsat/index.ts";

/** Most entries a workspace walk visits; a larger workspace is a RangeError. */
export const MAX_WORKSPACE_ENTRIES = 200_000;

/**
 * walk visits `root` and every entry under it, never following a link, each as the kernel path of
 * the entry relative to its open directory (fsat): a tree of any depth is walked, one deeper than
 * PATH_MAX (a unit can make one) included.
 */
function walk(root: string, visit: (path: string | Buffer, st: Stats) => void): void {
  let seen = 0;
  const count = (): void => {
    if (++seen > MAX_WORKSPACE_ENTRIES)
      throw new RangeError(`workspace ${root} holds more than ${MAX_WORKSPACE_ENTRIES} entries`);
  };
  const go = (dir: number): void => {
    for (const name of listAt(dir)) {
      count();
      const st = lstatAt(dir, name);
      if (st === null) continue;
      visit(atPath(dir, name), st);
      if (!st.isDirectory()) continue;
      const sub = openDirAt(dir, name);
      if (sub === null) continue;
      try {
        go(sub.fd);
      } finally {
        closeSync(sub.fd);
      }
    }
  };
  const top = openRoot(root);
  try {
    count();
    visit(`/proc/self/fd/${String(top)}`, fstatSync(top));
    go(top);
  } finally {
    closeSync(top);
  }
}

/**
 * handWorkspace (§5.1) gives the tree under `root` to host uid/gid `uid` so the unit can write it.
 * Links are never followed (lchown); a file with more than one link that another uid owns is left
 * alone, so a hard link a past unit made to a file outside can never be handed over.
 */
export function handWorkspace(root: string, uid: number): void {
  walk(root, (p, st) => {
    if (st.uid === uid && st.gid === uid) return;
    if (!st.isDirectory() && st.nlink > 1) return;
    lchownSync(p, uid, uid);
  });
}

/** workspaceBytes (§5.3) sums the sizes of the regular files under `root` (each link counted once). */
export function workspaceBytes(root: string): number {
  const seen = new Set<string>();
  let total = 0;
  walk(root, (_p, st) => {
    if (!st.isFile()) return;
    const key = `${st.dev}:${st.ino}`;
    if (seen.has(key)) return;
    seen.add(key);
    total += st.size;
  });
  return total;
}

/** diskBytesOf (§5.3) sums the storage the tree under `root` holds: allocated blocks × 512, directories included. */
export function diskBytesOf(root: string): number {
  const seen = new Set<string>();
  let total = 0;
  walk(root, (_p, st) => {
    const key = `${st.dev}:${st.ino}`;
    if (seen.has(key)) return;
    seen.add(key);
    total += st.blocks * 512;
  });
  return total;
}
