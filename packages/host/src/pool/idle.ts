// §15.3 A pooled item's real parts: a pre-created workspace and, where the host keeps one, a
// pre-started idle process, stopped (SIGSTOP) so it holds its memory without running.
import { spawn } from "node:child_process";
import { closeSync, existsSync, fstatSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { HostError } from "../errors.ts";
import { detachWorkspace } from "../sandbox/disk.ts";
import { closeQuiet, errnoOf, lstatAt, listAt, openDirAt, openRoot, removeTreeAt } from "../fsat/index.ts";
import { procCpuUs, procRssBytes, readProcStat } from "../meter/index.ts";

/** The idle process of an item, as recorded in its proc.json. */
export interface IdleProcess {
  readonly pid: number;
  readonly started_ms: number;
  /** The process's CPU time (µs) already accounted: at provisioning, then at each accrual. */
  cpu_us: string;
}

/** procState reads a process's state letter (R, S, T, Z…), or null when it is gone. */
function procState(pid: number): string | null {
  try {
    return /\) (\S) /.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** waitSleeping waits (up to 2 s) until the process has finished starting and sleeps. */
async function waitSleeping(pid: number): Promise<void> {
  for (let i = 0; i < 400 && procState(pid) !== "S"; i++) await new Promise((r) => setTimeout(r, 5));
}

/**
 * startIdle starts `sleep infinity` in `cwd`, detached; once it has finished starting (loader and
 * libc mapped, asleep) it is stopped with SIGSTOP, holding its memory without running. Resolves its pid.
 */
export async function startIdle(cwd: string): Promise<number> {
  const child = spawn("sleep", ["infinity"], { cwd, detached: true, stdio: "ignore" });
  const pid = await new Promise<number>((resolve, reject) => {
    child.once("spawn", () => (child.pid === undefined ? reject(new Error("no pid")) : resolve(child.pid)));
    child.once("error", reject);
  });
  child.unref();
  await waitSleeping(pid);
  process.kill(pid, "SIGSTOP");
  return pid;
}

/** isAlive reports whether `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/\) Z /.test(s);
  } catch {
    return false;
  }
}

/** readIdle reads an item's proc.json, or null when the item has no idle process. */
export function readIdle(path: string): IdleProcess | null {
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as IdleProcess) : null;
}

/** writeIdle records an item's idle process. */
export function writeIdle(path: string, p: IdleProcess): void {
  writeFileSync(path, JSON.stringify(p) + "\n");
}

/** idleUsage reads an idle process's resident bytes and total CPU µs; null when it is gone. */
export function idleUsage(pid: number): { rss: bigint; cpu_us: bigint } | null {
  if (!isAlive(pid)) return null;
  try {
    const s = readProcStat(pid);
    return { rss: procRssBytes(s), cpu_us: procCpuUs(s) };
  } catch {
    return null;
  }
}

/** stopIdle ends an idle process (continue, then terminate). */
export function stopIdle(pid: number): void {
  for (const sig of ["SIGCONT", "SIGKILL"] as const)
    try {
      process.kill(pid, sig);
    } catch {
      /* already gone */
    }
}

/**
 * diskBytes is the storage a directory tree holds: allocated blocks × 512, directories included.
 * The walk goes by directory descriptor and never follows a link (an item's workspace is unit
 * controlled): a directory swapped for a link mid-walk counts as the link; entries that vanish
 * count as nothing.
 */
export function diskBytes(p: string): bigint {
  const parent = openRoot(dirname(resolve(p)));
  try {
    const st = lstatAt(parent, basename(resolve(p)));
    if (st === null) return 0n;
    const d = st.isDirectory() ? openDirAt(parent, basename(resolve(p))) : null;
    if (d === null) return BigInt(st.blocks) * 512n;
    try {
      return dirBytes(d.fd);
    } finally {
      closeSync(d.fd);
    }
  } finally {
    closeSync(parent);
  }
}

function dirBytes(fd: number): bigint {
  let sum = BigInt(fstatSync(fd).blocks) * 512n;
  for (const name of listAt(fd)) {
    const st = lstatAt(fd, name);
    if (st === null) continue;
    const d = st.isDirectory() ? openDirAt(fd, name) : null;
    if (d === null) {
      sum += BigInt(st.blocks) * 512n;
      continue;
    }
    try {
      sum += dirBytes(d.fd);
    } finally {
      closeQuiet(d.fd);
    }
  }
  return sum;
}

const REMOVE_TRIES = 8;
// What a removal meets when an entry is swapped under it: the next try starts over from the parent.
const CHANGED = new Set(["ENOTEMPTY", "ENOENT", "ENOTDIR", "EISDIR"]);

/**
 * removeTree deletes an evicted item's folder by directory descriptor, following no link (a
 * directory a still-running process swaps for a link is unlinked as a link, never entered). Entries
 * that appear while it removes are retried a few times; a tree that keeps changing is refused with
 * `WorkspaceChanged`, never a raw ENOTEMPTY/ENOENT.
 */
export function removeTree(p: string): void {
  const full = resolve(p);
  // An item's workspace is its own bounded filesystem while its sandbox lives (sandbox/disk.ts).
  detachWorkspace(join(full, "workspace"));
  const parent = openRoot(dirname(full));
  try {
    for (let i = 0; ; i++) {
      try {
        removeTreeAt(parent, basename(full));
      } catch (e) {
        if (!CHANGED.has(errnoOf(e) ?? "")) throw e;
      }
      if (lstatAt(parent, basename(full)) === null) return;
      if (i + 1 >= REMOVE_TRIES)
        throw new HostError("WorkspaceChanged", `${full} kept changing while it was removed`);
    }
  } finally {
    closeSync(parent);
  }
}
