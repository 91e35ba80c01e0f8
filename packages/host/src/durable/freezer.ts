// §13 Freezing a sandbox's processes in place (S5: a parked run may retain resident memory). Where
// the run's cgroup2 directory has cgroup.freeze (pure cgroup v2, and the hybrid layout's unified
// tree) the whole cgroup is frozen there and the kernel reports `frozen 1` in cgroup.events once
// every task has stopped. Where it has not (a v1-only host) the run's processes are moved into a v1
// freezer cgroup of the same name and that is frozen; processes forked during the move are moved
// on the next pass, until none is left outside. Thaw undoes either. A freeze that the kernel does
// not confirm is refused (`FreezeFailed`): a suspension never reports frozen what is still running.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";
import { cgroupProcs } from "../sandbox/cgroup.ts";

/** Where a run's processes are frozen: its cgroup2 directory, or a v1 freezer directory. */
export interface FreezeTarget {
  readonly kind: "v2" | "v1";
  readonly dir: string;
}

const POLL_MS = 5;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function write(dir: string, file: string, value: string): void {
  try {
    writeFileSync(join(dir, file), value);
  } catch (e) {
    throw new HostError("FreezeFailed", `cannot write ${value} to ${join(dir, file)}`, { cause: e });
  }
}

function read(dir: string, file: string): string {
  try {
    return readFileSync(join(dir, file), "utf8");
  } catch {
    return "";
  }
}

/**
 * freezeTarget (§13) picks how the run whose cgroup directories are `dirs` (v2 first, as
 * createRunCgroup made them) is frozen: cgroup.freeze in its v2 directory, else a v1 freezer
 * directory named like the run's. Refuses (`FreezeFailed`) a host with neither.
 */
export function freezeTarget(v2: string | null, dirs: readonly string[]): FreezeTarget {
  if (v2 !== null && existsSync(join(v2, "cgroup.freeze"))) return { kind: "v2", dir: v2 };
  const name = (dirs[0] ?? "").split("/").pop() ?? "";
  const mount = freezerMount();
  if (mount === null || name === "")
    throw new HostError("FreezeFailed", "this host has neither cgroup.freeze nor a v1 freezer");
  return { kind: "v1", dir: join(mount, name) };
}

function freezerMount(): string | null {
  for (const line of read("/proc/self", "mountinfo").split("\n")) {
    const [pre, post] = line.split(" - ");
    const [type, , opts] = (post ?? "").split(" ");
    if (type === "cgroup" && (opts ?? "").split(",").includes("freezer")) return pre?.split(" ")[4] ?? null;
  }
  return null;
}

/**
 * freezeProcesses (§13) freezes every process of the run (`procsDirs` are the run's cgroup
 * directories) and resolves once the kernel reports them frozen. Refuses (`FreezeFailed`) when it
 * cannot write the freezer or the kernel does not confirm within `waitMs`.
 */
export async function freezeProcesses(
  t: FreezeTarget,
  procsDirs: readonly string[],
  waitMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  if (t.kind === "v2") {
    write(t.dir, "cgroup.freeze", "1");
    while (!/^frozen 1$/m.test(read(t.dir, "cgroup.events"))) {
      if (Date.now() > deadline) throw new HostError("FreezeFailed", `${t.dir} did not report frozen`);
      await sleep(POLL_MS);
    }
    return;
  }
  if (!existsSync(t.dir)) mkdirSync(t.dir);
  for (;;) {
    const inFreezer = new Set(cgroupProcs(t.dir));
    const outside = [...new Set(procsDirs.flatMap(cgroupProcs))].filter((p) => !inFreezer.has(p));
    for (const pid of outside) {
      try {
        writeFileSync(join(t.dir, "cgroup.procs"), String(pid));
      } catch {
        // it ended meanwhile
      }
    }
    write(t.dir, "freezer.state", "FROZEN");
    if (outside.length === 0 && read(t.dir, "freezer.state").trim() === "FROZEN") return;
    if (Date.now() > deadline) throw new HostError("FreezeFailed", `${t.dir} did not report FROZEN`);
    await sleep(POLL_MS);
  }
}

/** thawProcesses (§13) lets the frozen processes run again; `FreezeFailed` when the kernel refuses. */
export async function thawProcesses(t: FreezeTarget, waitMs = 10_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  if (t.kind === "v2") {
    write(t.dir, "cgroup.freeze", "0");
    while (/^frozen 1$/m.test(read(t.dir, "cgroup.events"))) {
      if (Date.now() > deadline) throw new HostError("FreezeFailed", `${t.dir} stayed frozen`);
      await sleep(POLL_MS);
    }
    return;
  }
  if (!existsSync(t.dir)) return;
  write(t.dir, "freezer.state", "THAWED");
  while (read(t.dir, "freezer.state").trim() !== "THAWED") {
    if (Date.now() > deadline) throw new HostError("FreezeFailed", `${t.dir} stayed frozen`);
    await sleep(POLL_MS);
  }
}

/**
 * frozenWithin (§13) asks the kernel again for up to `ms` until it says the target is frozen: a
 * frozen task woken by a signal leaves the frozen state for the moment it takes to handle it, and
 * the kernel says "not frozen" for that moment. False when it never says frozen within `ms`.
 */
export async function frozenWithin(t: FreezeTarget, ms = 200): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (isFrozen(t)) return true;
    if (Date.now() > deadline) return false;
    await sleep(POLL_MS);
  }
}

/** isFrozen reports whether the kernel says the target is frozen now. */
export function isFrozen(t: FreezeTarget): boolean {
  return t.kind === "v2"
    ? /^frozen 1$/m.test(read(t.dir, "cgroup.events"))
    : read(t.dir, "freezer.state").trim() === "FROZEN";
}

/** removeFreezer removes a v1 freezer directory once it is empty (a v2 target is the run's own cgroup). */
export function removeFreezer(t: FreezeTarget): void {
  if (t.kind !== "v1") return;
  try {
    rmdirSync(t.dir);
  } catch {
    // still populated, or gone
  }
}

/**
 * residentBytes (§13.6) reads the memory the run's cgroup holds now (memory.current on v2, else
 * memory.usage_in_bytes of its v1 memory directory); null when no counter can be read.
 */
export function residentBytes(dirs: readonly string[]): bigint | null {
  for (const d of dirs)
    for (const f of ["memory.current", "memory.usage_in_bytes"]) {
      const v = read(d, f).trim();
      if (/^\d{1,20}$/.test(v)) return BigInt(v);
    }
  return null;
}
