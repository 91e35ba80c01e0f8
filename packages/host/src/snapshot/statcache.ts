// §13.8 The stat cache of a run's snapshots: what lets the next snapshot of the same run skip
// reading a file that has not changed. For every regular file the last snapshot read, it keeps the
// file's identity (device, inode, size, mtime and ctime in nanoseconds) and the address and size of
// the content read. A later snapshot of the same run takes a file whose lstat identity is the same
// as an entry's, and whose object the store still holds at that size, without opening it. A write,
// truncation, chmod, rename over or replacement of the file moves its ctime (which no call can set
// back) or its inode, so the identity then differs and the file is read again.
//
// The gaps, closed as the rootfs stat index closes them (../image/statindex.ts): a file whose ctime
// or mtime is not strictly older than the moment the snapshot began (less a little slack, read from
// the filesystem's clock) may still change within the same clock tick, so it is never cached; a
// cache is valid only in the boot it was written in (after a crash, file data that never reached
// the disk under a name that did is read again). The cache is the host's own, kept in the store
// (`statcache/<run hex>.json`), never in the workspace; losing it costs only a full read.
import { readFileSync, renameSync, mkdirSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { isDigest, parseDigest, toHex, type Digest } from "@sbx/wire";
import { bootId, fsNow, SLACK_NS } from "../image/statindex.ts";
import { removeQuiet, tempPath, writeTemp } from "../store/durable.ts";
import type { FileStore } from "../store/filestore.ts";

const FORMAT = "sbx.statcache/1";

/** One cached file: `dev:ino:size:mtimeNs:ctimeNs` and what its content was. */
interface Cached {
  readonly id: string;
  readonly digest: Digest;
  readonly size: number;
}

function identity(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** A run's stat cache for one snapshot walk: the last snapshot's entries in, this one's out. */
export class StatCache {
  readonly #store: FileStore;
  readonly #file: string;
  readonly #before: Map<string, Cached>;
  readonly #after = new Map<string, Cached>();
  readonly #racyFrom: bigint;
  readonly #boot: string;
  /** Files taken from the cache unread, and files read. */
  hits = 0;
  reads = 0;

  private constructor(store: FileStore, file: string, before: Map<string, Cached>, at: bigint, boot: string) {
    this.#store = store;
    this.#file = file;
    this.#before = before;
    this.#racyFrom = at - SLACK_NS;
    this.#boot = boot;
  }

  /** StatCache.open reads the cache of run `key` in `store` (empty when absent, foreign or of another boot). */
  static open(store: FileStore, key: Digest): StatCache {
    const dir = join(store.root, "statcache");
    const file = join(dir, `${toHex(parseDigest(key))}.json`);
    const boot = bootId();
    mkdirSync(dir, { recursive: true });
    const at = fsNow(tempPath(join(store.root, "tmp")));
    return new StatCache(store, file, boot === "" ? new Map() : readCache(file, boot), at, boot);
  }

  /**
   * take returns the content of the file at `path` when its lstat `st` is the identity the last
   * snapshot read it at and the store still holds that object at that size; null otherwise.
   */
  take(path: string, st: BigIntStats): { digest: Digest; size: number } | null {
    const c = this.#before.get(path);
    if (c === undefined || c.id !== identity(st)) return null;
    const at = this.#store.locate(c.digest);
    if (at === null || at.size !== c.size) return null;
    this.#after.set(path, c);
    this.hits++;
    return c;
  }

  /** read notes what a file read at identity `st` (its fstat when opened) held; racy files are not kept. */
  read(path: string, st: BigIntStats, digest: Digest, size: number): void {
    this.reads++;
    if (st.ctimeNs >= this.#racyFrom || st.mtimeNs >= this.#racyFrom) return;
    this.#after.set(path, { id: identity(st), digest, size });
  }

  /** save replaces the run's cache with this walk's entries (not synced: it is only a hint). */
  save(): void {
    if (this.#boot === "") return;
    const files: Record<string, [string, string, number]> = {};
    for (const [p, c] of this.#after) files[p] = [c.id, c.digest, c.size];
    const bytes = new TextEncoder().encode(JSON.stringify({ format: FORMAT, boot: this.#boot, files }));
    const tmp = writeTemp(join(this.#store.root, "tmp"), bytes, 0o600, false);
    try {
      renameSync(tmp, this.#file);
    } catch (e) {
      removeQuiet(tmp);
      throw e;
    }
  }
}

// A cache that cannot be read or is not of this form is no cache: every file is read.
function readCache(file: string, boot: string): Map<string, Cached> {
  const out = new Map<string, Cached>();
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return out;
  }
  const o = v as { format?: unknown; boot?: unknown; files?: unknown };
  if (o.format !== FORMAT || o.boot !== boot || typeof o.files !== "object" || o.files === null) return out;
  for (const [p, e] of Object.entries(o.files as Record<string, unknown>)) {
    if (!Array.isArray(e) || e.length !== 3) continue;
    const [id, digest, size] = e as unknown[];
    if (typeof id === "string" && isDigest(digest) && Number.isSafeInteger(size))
      out.set(p, { id, digest, size: size as number });
  }
  return out;
}
