// Host-side walks and writes over trees a unit controls (§8.2 `--watch`, `sbx run --out`), built on
// the directory-relative operations of ./at.ts: never through a link, every opened entry checked with
// fstat, every digest taken from the descriptor that was checked, every path kept one component at a
// time however deep the tree.
import { closeSync, fsyncSync, lstatSync, readSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { createBlake3, digestBytes, formatDigest, type Digest } from "@sbx/wire";
import { HostError } from "../errors.ts";
import {
  assertName,
  atPath,
  closeQuiet,
  createFileAt,
  listAt,
  lstatAt,
  mkdirAt,
  openDirAt,
  openFileAt,
  openRoot,
  renameAt,
  removeTreeAt,
} from "./at.ts";
import { writeFully } from "../store/fault.ts";

const CHUNK = 1 << 20;
const CHUNK_BUF = new Uint8Array(CHUNK);

/**
 * scanTreeAt maps each regular file under `root` (relative path, '/'-separated, names as UTF-8) to
 * a stamp of inode, size, mtime and ctime, walking by directory descriptor without following links.
 * Entries that vanish during the walk are left out. RangeError past `maxEntries` entries.
 */
export function scanTreeAt(root: string, maxEntries: number): Map<string, string> {
  const out = new Map<string, string>();
  let seen = 0;
  const walk = (dirFd: number, rel: string): void => {
    const names = listAt(dirFd).sort((a, b) => Buffer.compare(a, b));
    for (const raw of names) {
      if (++seen > maxEntries)
        throw new RangeError(`scanTreeAt: more than ${maxEntries} entries under ${root}`);
      const p = rel === "" ? raw.toString() : `${rel}/${raw.toString()}`;
      const st = lstatSync(atPath(dirFd, raw), { bigint: true, throwIfNoEntry: false });
      if (st?.isFile() === true) out.set(p, `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`);
      else if (st?.isDirectory() === true) {
        const d = openDirAt(dirFd, raw);
        if (d === null) continue;
        try {
          walk(d.fd, p);
        } finally {
          closeSync(d.fd);
        }
      }
    }
  };
  const fd = openRoot(root);
  try {
    walk(fd, "");
  } finally {
    closeSync(fd);
  }
  return out;
}

/**
 * digestAt returns the digest and size of the regular file at `rel` ('/'-separated) under `root`,
 * read from the descriptor opened without following any link at any component; null when it is not
 * a regular file now (gone, replaced by a link, a FIFO or anything else).
 */
export function digestAt(root: string, rel: string): { digest: Digest; size: number } | null {
  const parts = rel.split("/");
  const last = parts.pop();
  if (last === undefined) return null;
  let dirFd = openRoot(root);
  try {
    for (const part of parts) {
      const d = openDirAt(dirFd, part);
      if (d === null) return null;
      closeSync(dirFd);
      dirFd = d.fd;
    }
    const f = openFileAt(dirFd, last);
    if (f === null) return null;
    try {
      return hashOpenFile(f.fd, f.st.size);
    } finally {
      closeSync(f.fd);
    }
  } finally {
    closeQuiet(dirFd);
  }
}

/**
 * hashOpenFile hashes at most `limit` bytes of an open file from offset 0 (positional reads: the
 * descriptor's offset is untouched), handing each chunk read to `onChunk` when given. A file that
 * fits in one chunk is hashed in one call: creating a streaming hasher costs more than hashing a
 * small file, and workspaces are mostly small files.
 */
export function hashOpenFile(
  fd: number,
  limit: number,
  onChunk?: (chunk: Uint8Array) => void,
): { digest: Digest; size: number } {
  const buf = CHUNK_BUF; // synchronous use only, so one buffer serves every call
  const first = readSync(fd, buf, 0, Math.min(CHUNK, limit), 0);
  onChunk?.(buf.subarray(0, first));
  if (first < CHUNK || first >= limit) return { digest: digestBytes(buf.subarray(0, first)), size: first };
  const h = createBlake3();
  h.update(buf.subarray(0, first));
  let size = first;
  for (
    let n;
    size < limit && (n = readSync(fd, buf, 0, Math.min(CHUNK, limit - size), size)) > 0;
    size += n
  ) {
    h.update(buf.subarray(0, n));
    onChunk?.(buf.subarray(0, n));
  }
  return { digest: formatDigest(h.digest()), size };
}

/**
 * openDirNoFollow opens the absolute directory `path` one component at a time from "/", never
 * following a link, creating missing components (mode 0o755) when `create`. `UnsafePath` when a
 * component is a link or not a directory. Returns the descriptor; the caller closes it.
 */
export function openDirNoFollow(path: string, create: boolean): number {
  if (!path.startsWith("/")) throw new RangeError(`openDirNoFollow: ${path} is not absolute`);
  let fd = openRoot("/");
  try {
    for (const part of path.split("/").filter((p) => p !== "" && p !== ".")) {
      if (part === "..") throw new HostError("UnsafePath", `${path} climbs with ".."`);
      let next = openDirAt(fd, part)?.fd ?? null;
      if (next === null && create && lstatAt(fd, part) === null) next = mkdirAt(fd, part, 0o755);
      if (next === null) throw new HostError("UnsafePath", `${path}: ${part} is a link or not a directory`);
      closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (e) {
    closeQuiet(fd);
    throw e;
  }
}

/**
 * writeFilesAt writes each file into the directory `dir` (resolved against the working directory;
 * created when missing; no component may be a link, even one outside the workspace) as root may
 * safely do inside a tree a unit controls: the directory is reached without following links, each
 * file goes to a fresh O_EXCL temp name and is renamed over its name (a link planted under that name
 * is replaced, never written through), then the directory is fsynced. `UnsafePath` as above.
 */
export function writeFilesAt(dir: string, files: readonly { name: string; bytes: Uint8Array }[]): void {
  const fd = openDirNoFollow(resolve(dir), true);
  try {
    for (const f of files) {
      assertName(f.name);
      const tmp = `.${f.name.slice(0, 200)}.${randomBytes(6).toString("hex")}.tmp`;
      const out = createFileAt(fd, tmp, 0o644);
      try {
        writeFully(out, f.bytes, 0, "out");
        fsyncSync(out);
      } catch (e) {
        closeSync(out);
        removeTreeAt(fd, tmp);
        throw e;
      }
      closeSync(out);
      renameAt(fd, tmp, fd, f.name);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * createFilesAt creates each of `names` in the directory `dir` (resolved against the working
 * directory; created when missing; no component may be a link) exclusively and without following
 * a link, for a writer that streams into them (`sbx run --out`: stdout, stderr). A name that
 * already exists (a link planted there, or anything else) is `UnsafePath`, never written through
 * nor replaced; files this call created are removed again on failure. Returns each file's path
 * and open descriptor (the caller closes them).
 */
export function createFilesAt(
  dir: string,
  names: readonly string[],
  mode: number,
): { path: string; fd: number }[] {
  const full = resolve(dir);
  const fd = openDirNoFollow(full, true);
  const made: { name: string; path: string; fd: number }[] = [];
  try {
    for (const name of names) {
      assertName(name);
      try {
        made.push({ name, path: `${full}/${name}`, fd: createFileAt(fd, name, mode) });
      } catch (e) {
        if ((e as { code?: unknown }).code !== "EEXIST") throw e;
        const what = lstatAt(fd, name)?.isSymbolicLink() === true ? "a link" : "an existing entry";
        throw new HostError(
          "UnsafePath",
          `${full}/${name} is ${what}; it is never written through or replaced`,
        );
      }
    }
    return made.map(({ path, fd: f }) => ({ path, fd: f }));
  } catch (e) {
    for (const m of made) {
      closeQuiet(m.fd);
      removeTreeAt(fd, m.name);
    }
    throw e;
  } finally {
    closeSync(fd);
  }
}
