// §14.9.4 The stat index of a cached rootfs: what lets a use of the cache skip re-hashing every file.
// It lists, for every entry of the tree (sorted by name bytes, links never followed), its kind,
// permission bits, path, size, inode number, mtime and ctime in nanoseconds, and a link's target;
// its digest is kept in the rootfs record beside the tree digest. A change made through the
// filesystem to any entry (its bytes, mode, name, or a replacement) moves its ctime, which no
// unprivileged or privileged call can set back, or its inode: the digest then differs.
//
// Two gaps are closed explicitly. Racy entries: a file changed within the same clock tick as the
// index was taken could keep its ctime, so every regular file whose ctime or mtime is not strictly
// older than the moment the index was taken (`at`, read from the filesystem's own clock) has its
// content sha256 kept in the index and re-hashed at every use. Crashes: an index is valid only in
// the boot it was taken in (the kernel's boot id), so after a crash or power loss (file data that
// never reached the disk under a name that did) the first use hashes the whole tree again.
import { createHash } from "node:crypto";
import { closeSync, lstatSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";
import { sha256File } from "./store.ts";

/** The index kept in a rootfs record. */
export interface StatIndex {
  /** The kernel boot id the index was taken in. */
  readonly boot: string;
  /** The filesystem's time when the index was taken, in ns (decimal). */
  readonly at: string;
  /** `sha256:<hex>` over the stat listing. */
  readonly stat: string;
  /** Racy regular files: path → content sha256 hex, re-hashed at every use. */
  readonly racy: Readonly<Record<string, string>>;
}

/** A little slack below `at`: a file written just before the probe may share its clock tick. */
const SLACK_NS = 20_000_000n;

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** bootId is this boot's kernel id, or "" where unreadable (then no index is ever valid). */
export function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "";
  }
}

/** fsNow reads the filesystem's clock: the ctime of a fresh file made at `probe` (then removed). */
export function fsNow(probe: string): bigint {
  closeSync(openSync(probe, "wx", 0o600));
  try {
    return lstatSync(probe, { bigint: true }).ctimeNs;
  } finally {
    rmSync(probe, { force: true });
  }
}

/** What one walk of the tree found: the listing's digest and the racy files' content digests. */
export interface StatWalk {
  readonly stat: string;
  readonly racy: Record<string, string>;
}

/**
 * statWalk lists `root` as the index does. Regular files with ctime or mtime at or after
 * `racyFrom` have their content hashed into `racy`. Anything but a file, directory or link is
 * `RootfsMismatch` (no unpack makes one).
 */
export function statWalk(root: string, racyFrom: bigint): StatWalk {
  const h = createHash("sha256");
  const racy: Record<string, string> = Object.create(null) as Record<string, string>;
  const line = (r: string, p: string): boolean => {
    const st = lstatSync(p, { bigint: true });
    const mode = (st.mode & 0o7777n).toString(8);
    const common = `${mode} ${r}\0${st.size} ${st.ino} ${st.mtimeNs} ${st.ctimeNs}`;
    if (st.isDirectory()) {
      h.update(`d ${common}\0`);
      return true;
    }
    if (st.isFile()) {
      h.update(`f ${common}\0`);
      if (st.ctimeNs >= racyFrom || st.mtimeNs >= racyFrom) racy[r] = sha256File(p);
    } else if (st.isSymbolicLink()) h.update(`l ${common}\0${readlinkSync(p)}\0`);
    else throw new HostError("RootfsMismatch", `${r} in the rootfs is not a file, directory or link`);
    return false;
  };
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort(byBytes)) {
      const p = join(dir, name);
      const r = rel === "" ? name : `${rel}/${name}`;
      if (line(r, p)) walk(p, r);
    }
  };
  // The root itself is left out: renaming a finished tree into place changes its ctime.
  walk(root, "");
  return { stat: `sha256:${h.digest("hex")}`, racy };
}

/**
 * takeIndex takes the index of `root`, whose content the caller has just verified; `probe` is a fresh
 * name on the same filesystem. Returns null when the tree changed while it was walked twice.
 */
export function takeIndex(root: string, probe: string, verify: () => void): StatIndex | null {
  const at = fsNow(probe);
  const first = statWalk(root, at - SLACK_NS);
  verify();
  const second = statWalk(root, at - SLACK_NS);
  if (first.stat !== second.stat || JSON.stringify(first.racy) !== JSON.stringify(second.racy)) return null;
  return { boot: bootId(), at: String(at), stat: first.stat, racy: first.racy };
}

/**
 * indexHolds says whether `root` is still what `index` describes: the same boot, the same stat
 * listing, and every racy file's content unchanged. False on any difference (the caller then hashes
 * the whole tree); never throws for a tree that merely differs.
 */
export function indexHolds(root: string, index: StatIndex): boolean {
  const boot = bootId();
  if (boot === "" || index.boot !== boot || !/^\d{1,30}$/.test(index.at)) return false;
  let now: StatWalk;
  try {
    now = statWalk(root, BigInt(index.at) - SLACK_NS);
  } catch {
    return false;
  }
  if (now.stat !== index.stat) return false;
  const want = Object.entries(index.racy).sort(([a], [b]) => byBytes(a, b));
  const got = Object.entries(now.racy).sort(([a], [b]) => byBytes(a, b));
  return JSON.stringify(want) === JSON.stringify(got);
}

/** parseIndex reads an index from a record's JSON value, or null when it is not one. */
export function parseStatIndex(v: unknown): StatIndex | null {
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  const racy = o.racy;
  if (
    typeof o.boot !== "string" ||
    typeof o.at !== "string" ||
    typeof o.stat !== "string" ||
    typeof racy !== "object" ||
    racy === null ||
    Array.isArray(racy) ||
    !Object.values(racy).every((x) => typeof x === "string")
  )
    return null;
  return {
    boot: o.boot,
    at: o.at,
    stat: o.stat,
    racy: Object.assign(Object.create(null) as Record<string, string>, racy),
  };
}
