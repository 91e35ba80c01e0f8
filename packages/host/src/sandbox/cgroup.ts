// §5.3 One cgroup per run, holding every process of the sandbox: limits on memory, CPU and
// processes, the meter's CPU counter (§6.3), and the kill of whatever the unit leaves behind.
// On a pure cgroup v2 host every file is in one directory (memory.max, cpu.max, pids.max,
// cgroup.kill). On a hybrid host (v1 controllers plus a cgroup2 tree without controllers) the run has
// a cgroup2 directory (accounting, cgroup.kill) and one v1 directory per limiting controller
// (memory.limit_in_bytes, cpu.cfs_quota_us, pids.max); the sandbox joins all of them before exec.
// A requested limit that no mounted hierarchy can apply is refused: never silently unlimited.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";

/** Limits of one run (§5.3); a member left out is the host's default, never "unlimited". */
export interface Limits {
  /** Memory, swap included, in bytes. */
  readonly memoryBytes: number;
  /** CPU time per period, in thousandths of a CPU (1000 = one full CPU). */
  readonly cpuMillis: number;
  /** Most processes and threads at once. */
  readonly pids: number;
}

/** The host's defaults: 1 GiB, two CPUs, 512 tasks. */
export const DEFAULT_LIMITS: Limits = { memoryBytes: 1 << 30, cpuMillis: 2000, pids: 512 };

type Controller = "memory" | "cpu" | "pids";
const CONTROLLERS: readonly Controller[] = ["memory", "cpu", "pids"];
const CPU_PERIOD_US = 100_000;

/** Where each hierarchy is mounted and where this process sits in it. */
export interface Hierarchies {
  /** The cgroup2 mount point, or null. */
  readonly v2: string | null;
  /** This process's cgroup2 path under that mount ("/" for the root). */
  readonly v2Self: string;
  /** v1 mounts carrying a controller, and this process's path in each. */
  readonly v1: Readonly<Partial<Record<Controller | "cpuacct", { mount: string; self: string }>>>;
}

/** parseHierarchies (§5.3) reads cgroup mounts from mountinfo text and our place in them from /proc/self/cgroup text. */
export function parseHierarchies(mountinfo: string, selfCgroup: string): Hierarchies {
  const selfV1 = new Map<string, string>();
  let v2Self = "/";
  for (const line of selfCgroup.split("\n")) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === "0" && m[2] === "") v2Self = m[3] ?? "/";
    else for (const c of (m[2] ?? "").split(",")) selfV1.set(c, m[3] ?? "/");
  }
  let v2: string | null = null;
  const v1: Partial<Record<Controller | "cpuacct", { mount: string; self: string }>> = {};
  for (const line of mountinfo.split("\n")) {
    const [pre, post] = line.split(" - ");
    const mountPoint = pre?.split(" ")[4];
    const [type, , opts] = (post ?? "").split(" ");
    if (mountPoint === undefined) continue;
    if (type === "cgroup2" && v2 === null) v2 = mountPoint;
    if (type !== "cgroup") continue;
    for (const c of (opts ?? "").split(","))
      if ((c === "memory" || c === "cpu" || c === "pids" || c === "cpuacct") && v1[c] === undefined)
        v1[c] = { mount: mountPoint, self: selfV1.get(c) ?? "/" };
  }
  return { v2, v2Self, v1 };
}

/** hostHierarchies (§5.3) reads this host's hierarchies. */
export function hostHierarchies(): Hierarchies {
  return parseHierarchies(
    readFileSync("/proc/self/mountinfo", "utf8"),
    readFileSync("/proc/self/cgroup", "utf8"),
  );
}

/** A run's cgroup, created and limited. */
export interface RunCgroup {
  /** The cgroup2 directory (its cpu.stat is what the meter reads), or null on a v1-only host. */
  readonly v2: string | null;
  /** Every directory the sandbox joins (cgroup.procs is written in each), v2 first. */
  readonly dirs: readonly string[];
  /** Where each limit was written: "v2" or "v1". */
  readonly applied: Readonly<Record<Controller, "v1" | "v2">>;
  readonly limits: Limits;
}

function controllersOf(dir: string): string[] {
  try {
    return readFileSync(join(dir, "cgroup.controllers"), "utf8").trim().split(/\s+/);
  } catch {
    return [];
  }
}

function put(dir: string, file: string, value: string): void {
  try {
    writeFileSync(join(dir, file), value);
  } catch (e) {
    throw new HostError("LimitUnavailable", `cannot write ${value} to ${join(dir, file)}`, { cause: e });
  }
}

function writeV2(dir: string, c: Controller, l: Limits): void {
  if (c === "memory") {
    put(dir, "memory.max", String(l.memoryBytes));
    if (existsSync(join(dir, "memory.swap.max"))) put(dir, "memory.swap.max", "0");
  } else if (c === "cpu")
    put(dir, "cpu.max", `${Math.ceil((l.cpuMillis * CPU_PERIOD_US) / 1000)} ${CPU_PERIOD_US}`);
  else put(dir, "pids.max", String(l.pids));
}

function writeV1(dir: string, c: Controller, l: Limits): void {
  if (c === "memory") {
    put(dir, "memory.limit_in_bytes", String(l.memoryBytes));
    // With swap accounting on, memory plus swap is bounded too, so swap is no way round the limit.
    if (existsSync(join(dir, "memory.memsw.limit_in_bytes")))
      put(dir, "memory.memsw.limit_in_bytes", String(l.memoryBytes));
  } else if (c === "cpu") {
    put(dir, "cpu.cfs_period_us", String(CPU_PERIOD_US));
    put(dir, "cpu.cfs_quota_us", String(Math.ceil((l.cpuMillis * CPU_PERIOD_US) / 1000)));
  } else put(dir, "pids.max", String(l.pids));
}

function checkLimits(l: Limits): void {
  const ok = (n: number, min: number) => Number.isSafeInteger(n) && n >= min;
  if (!ok(l.memoryBytes, 1 << 20)) throw new RangeError("limits.memoryBytes must be an integer ≥ 1 MiB");
  if (!ok(l.cpuMillis, 10)) throw new RangeError("limits.cpuMillis must be an integer ≥ 10");
  if (!ok(l.pids, 1)) throw new RangeError("limits.pids must be a positive integer");
}

/**
 * createRunCgroup (§5.3) makes the cgroup(s) of one run, named `name`, beside this process's own,
 * and writes every limit: in the cgroup2 directory where its controller is enabled there, else in
 * a v1 directory of that controller. Refuses (`LimitUnavailable`) a limit no hierarchy can apply,
 * and (`CgroupUnavailable`) when no cgroup can be made; what it made before refusing is removed.
 */
export function createRunCgroup(name: string, limits: Limits, h: Hierarchies = hostHierarchies()): RunCgroup {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) throw new RangeError(`createRunCgroup: bad name ${name}`);
  checkLimits(limits);
  sweepStale(h);
  const made: string[] = [];
  try {
    const v2 = h.v2 === null ? null : join(h.v2, h.v2Self, name);
    if (v2 !== null) mkdir(v2, made);
    const have = v2 === null ? [] : controllersOf(v2);
    const applied: Partial<Record<Controller, "v1" | "v2">> = {};
    for (const c of CONTROLLERS) {
      if (v2 !== null && have.includes(c)) {
        writeV2(v2, c, limits);
        applied[c] = "v2";
        continue;
      }
      const m = h.v1[c];
      if (m === undefined) throw new HostError("LimitUnavailable", `no hierarchy applies the ${c} limit`);
      const dir = join(m.mount, m.self, name);
      if (!made.includes(dir)) mkdir(dir, made);
      writeV1(dir, c, limits);
      applied[c] = "v1";
    }
    // With no cgroup2 tree the meter reads v1 cpuacct, which the sandbox must then join too.
    const acct = h.v1.cpuacct;
    if (v2 === null && acct !== undefined) {
      const dir = join(acct.mount, acct.self, name);
      if (!made.includes(dir)) mkdir(dir, made);
    }
    return { v2, dirs: made, applied: applied as Record<Controller, "v1" | "v2">, limits };
  } catch (e) {
    for (const d of made.reverse()) tryRmdir(d);
    throw e;
  }
}

/** Run cgroups are named sbx-run-<host pid>-<random>: the pid of the host process that made them. */
const RUN_NAME = /^sbx-run-(\d+)-[0-9a-f]+$/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * sweepStale (§5.3) removes the empty run cgroups a host process that is no longer alive left behind
 * (it crashed before removing them). A cgroup that still holds a process is left for its owner, and
 * so is a held one (holdRunCgroup: a record outliving its maker still needs its counters).
 */
export function sweepStale(h: Hierarchies): void {
  const parents = [
    h.v2 === null ? null : join(h.v2, h.v2Self),
    ...Object.values(h.v1).map((m) => join(m.mount, m.self)),
  ];
  for (const parent of new Set(parents))
    if (parent !== null)
      for (const name of safeList(parent)) {
        const pid = RUN_NAME.exec(name)?.[1];
        if (pid !== undefined && !alive(Number(pid)) && cgroupProcs(join(parent, name)).length === 0)
          tryRmdir(join(parent, name));
      }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function mkdir(dir: string, made: string[]): void {
  try {
    mkdirSync(dir);
  } catch (e) {
    throw new HostError("CgroupUnavailable", `cannot create cgroup ${dir}`, { cause: e });
  }
  made.push(dir);
}

/**
 * The child directory a held run cgroup keeps (§5.3): a cgroup with a child cannot be removed, so a
 * sweep by any host process leaves it, whoever made it and whether or not it still holds processes.
 */
const HOLD = "sbx-hold";

/**
 * holdRunCgroup (§5.3) keeps the run cgroup directories `dirs` from every stale sweep until
 * removeCgroupDir removes them: for a cgroup that outlives the process named in it (a durable run's,
 * whose interval file names it until the interval is recovered; a pool item's, named by the item
 * until it is claimed and released or reaped). The caller records the cgroup before holding it, so
 * a crash in between leaves an unheld cgroup the sweep removes once it is empty, never a held one
 * that nothing names. `CgroupUnavailable` when the kernel refuses the child.
 */
export function holdRunCgroup(dirs: readonly string[]): void {
  for (const d of dirs)
    try {
      mkdirSync(join(d, HOLD));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST")
        throw new HostError("CgroupUnavailable", `cannot hold cgroup ${d}`, { cause: e });
    }
}

/** removeCgroupDir removes one (empty) run cgroup directory, its hold first; false when it cannot (yet). */
export function removeCgroupDir(dir: string): boolean {
  tryRmdir(join(dir, HOLD));
  return tryRmdir(dir);
}

function tryRmdir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** cgroupProcs (§5.3) lists the processes in one cgroup directory (none when it is gone). */
export function cgroupProcs(dir: string): number[] {
  let text: string;
  try {
    text = readFileSync(join(dir, "cgroup.procs"), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map(Number);
}

function counter(dir: string, file: string, key: string): number {
  try {
    const m = new RegExp(`^${key} (\\d+)$`, "m").exec(readFileSync(join(dir, file), "utf8"));
    return m?.[1] === undefined ? 0 : Number(m[1]);
  } catch {
    return 0;
  }
}

/** Which limits the run ran into (§5.3): the kernel's own counters, read before removal. */
export interface LimitHits {
  /** Processes the OOM killer killed in the run's cgroup. */
  readonly oomKills: number;
  /** Forks refused at the pids limit. */
  readonly pidsRefused: number;
}

/** limitHits (§5.3) reads the OOM-kill and pids-limit counters of a run's cgroup. */
export function limitHits(cg: RunCgroup): LimitHits {
  let oomKills = 0;
  let pidsRefused = 0;
  for (const d of cg.dirs) {
    oomKills += counter(d, "memory.events", "oom_kill") + counter(d, "memory.oom_control", "oom_kill");
    pidsRefused += counter(d, "pids.events", "max");
  }
  return { oomKills, pidsRefused };
}

/**
 * killRunCgroup (§5.3) kills every process left in the run's cgroups (cgroup.kill where the kernel
 * has it, and SIGKILL to each listed process) until none is left. The cgroups stay, so their
 * counters can still be read. Throws `CgroupBusy` when a process survives `waitMs`.
 */
export async function killRunCgroup(cg: RunCgroup, waitMs = 5000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const left = cg.dirs.flatMap(cgroupProcs);
    if (left.length === 0) return;
    if (Date.now() > deadline)
      throw new HostError(
        "CgroupBusy",
        `processes ${left.join(", ")} outlived the kill of ${cg.dirs[0] ?? ""}`,
      );
    if (cg.v2 !== null && existsSync(join(cg.v2, "cgroup.kill"))) put(cg.v2, "cgroup.kill", "1");
    for (const pid of left)
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * removeRunCgroup (§5.3) kills what is left (killRunCgroup) and removes the run's cgroups. A process
 * can leave a cgroup a moment after cgroup.procs stops listing it, so removal is retried until
 * `waitMs`; then `CgroupBusy`.
 */
export async function removeRunCgroup(cg: RunCgroup, waitMs = 5000): Promise<void> {
  await killRunCgroup(cg, waitMs);
  const deadline = Date.now() + waitMs;
  for (const d of [...cg.dirs].reverse())
    while (!removeCgroupDir(d) && existsSync(d)) {
      if (Date.now() > deadline) throw new HostError("CgroupBusy", `cannot remove cgroup ${d}`);
      await new Promise((r) => setTimeout(r, 5));
    }
}
