// §15.3 A pooled item's real parts: a pre-created workspace and, where the host keeps one, a
// pre-started idle process, stopped (SIGSTOP) so it holds its memory without running.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, lstatSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

/** diskBytes is the storage a directory tree holds: allocated blocks × 512, directories included. */
export function diskBytes(p: string): bigint {
  const st = lstatSync(p, { bigint: true });
  let sum = st.blocks * 512n;
  if (st.isDirectory()) for (const n of readdirSync(p)) sum += diskBytes(join(p, n));
  return sum;
}

/** removeTree deletes an evicted item's folder. */
export function removeTree(p: string): void {
  rmSync(p, { recursive: true, force: true });
}
