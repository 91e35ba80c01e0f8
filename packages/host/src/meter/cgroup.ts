// §6.3 cgroup CPU accounting as a meter source: cgroup v2 `cpu.stat` (usage_usec, present in every
// v2 cgroup even without the cpu controller) and cgroup v1 `cpuacct.usage` (nanoseconds). A unit's
// cgroup keeps counting after its processes exit, so nothing is lost at the end of a run.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";

/** Where the cgroup hierarchies this host can meter with are mounted; null when absent. */
export interface CgroupMounts {
  /** The cgroup2 mount point (e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified on hybrid hosts). */
  readonly v2: string | null;
  /** The v1 hierarchy carrying the cpuacct controller (e.g. /sys/fs/cgroup/cpuacct). */
  readonly cpuacct: string | null;
}

/**
 * parseMountinfo (§6.3) finds the cgroup2 and v1 cpuacct mount points in the text of /proc/self/mountinfo
 * (proc(5): field 5 is the mount point; after " - " come the type and the super options).
 */
export function parseMountinfo(text: string): CgroupMounts {
  let v2: string | null = null;
  let cpuacct: string | null = null;
  for (const line of text.split("\n")) {
    const [pre, post] = line.split(" - ");
    if (pre === undefined || post === undefined) continue;
    const mountPoint = pre.split(" ")[4];
    const [type, , opts] = post.split(" ");
    if (mountPoint === undefined) continue;
    if (type === "cgroup2" && v2 === null) v2 = mountPoint;
    if (type === "cgroup" && cpuacct === null && (opts ?? "").split(",").includes("cpuacct"))
      cpuacct = mountPoint;
  }
  return { v2, cpuacct };
}

/** cgroupMounts (§6.3) reads this host's cgroup mounts from /proc/self/mountinfo. */
export function cgroupMounts(): CgroupMounts {
  return parseMountinfo(readFileSync("/proc/self/mountinfo", "utf8"));
}

function readStat(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new HostError("BadCgroupStat", `cannot read ${path}`, { cause: e });
  }
}

/** parseCpuStat (§6.3) reads usage_usec from the text of a v2 cpu.stat. Refuses a file without it (`BadCgroupStat`). */
export function parseCpuStat(text: string): bigint {
  const m = /^usage_usec (\d{1,20})$/m.exec(text);
  if (m?.[1] === undefined) throw new HostError("BadCgroupStat", "cpu.stat has no usage_usec line");
  return BigInt(m[1]);
}

/** readCpuStatV2 (§6.3) returns a v2 cgroup's CPU time in µs (cpu.stat usage_usec). Refuses as parseCpuStat does. */
export function readCpuStatV2(dir: string): bigint {
  return parseCpuStat(readStat(join(dir, "cpu.stat")));
}

/** readCpuacctV1 (§6.3) returns a v1 cpuacct cgroup's CPU time in µs (cpuacct.usage is in ns). Refuses a malformed file (`BadCgroupStat`). */
export function readCpuacctV1(dir: string): bigint {
  const t = readStat(join(dir, "cpuacct.usage")).trim();
  if (!/^\d{1,20}$/.test(t)) throw new HostError("BadCgroupStat", `cpuacct.usage holds ${JSON.stringify(t)}`);
  return BigInt(t) / 1000n;
}

/** cgroupVersion (§6.3): the version of the cgroup at `dir`, told by its accounting file; `CgroupUnavailable` when it has none. */
export function cgroupVersion(dir: string): 1 | 2 {
  if (existsSync(join(dir, "cpu.stat")) && !existsSync(join(dir, "cpuacct.usage"))) return 2;
  if (existsSync(join(dir, "cpuacct.usage"))) return 1;
  throw new HostError("CgroupUnavailable", `${dir} has neither cpu.stat nor cpuacct.usage`);
}

/** readCgroupCpuUs returns the CPU time of the cgroup at `dir` in µs, v1 or v2 (§6.3). */
export function readCgroupCpuUs(dir: string): bigint {
  return cgroupVersion(dir) === 2 ? readCpuStatV2(dir) : readCpuacctV1(dir);
}

/** cgroupPids (§6.3) lists the processes in the cgroup at `dir` (cgroup.procs). */
export function cgroupPids(dir: string): number[] {
  return readStat(join(dir, "cgroup.procs"))
    .split("\n")
    .filter((l) => l.length > 0)
    .map(Number);
}

/** A cgroup created for one unit. */
export interface UnitCgroup {
  readonly path: string;
  readonly version: 1 | 2;
  /** The root of its hierarchy: its CPU time is the machine's (the denominator of an attribution). */
  readonly root: string;
}

/**
 * createUnitCgroup makes a fresh cgroup named `name` for a unit (§6.3): under the cgroup2 mount
 * when there is one and it is writable, else under the v1 cpuacct hierarchy. Refuses when neither
 * can be created (`CgroupUnavailable`, e.g. not root or no cgroup mounted).
 */
export function createUnitCgroup(name: string, mounts: CgroupMounts = cgroupMounts()): UnitCgroup {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) throw new RangeError(`createUnitCgroup: bad name ${name}`);
  const errors: unknown[] = [];
  for (const [root, version] of [
    [mounts.v2, 2],
    [mounts.cpuacct, 1],
  ] as const) {
    if (root === null) continue;
    try {
      mkdirSync(join(root, name));
      return { path: join(root, name), version, root };
    } catch (e) {
      errors.push(e);
    }
  }
  throw new HostError("CgroupUnavailable", `cannot create cgroup ${name}`, { cause: errors });
}

/** addToCgroup (§6.3) moves process `pid` (and its future children) into the cgroup at `dir`. */
export function addToCgroup(dir: string, pid: number): void {
  writeFileSync(join(dir, "cgroup.procs"), `${pid}\n`);
}

/**
 * killCgroup (§5.3) kills every process in the cgroup at `dir` (cgroup.kill where the kernel has it,
 * and SIGKILL to each listed process) and waits until none is listed; `CgroupBusy` after `waitMs`.
 */
export async function killCgroup(dir: string, waitMs = 5000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let left = cgroupPids(dir); left.length > 0; left = cgroupPids(dir)) {
    if (Date.now() > deadline)
      throw new HostError("CgroupBusy", `processes ${left.join(", ")} outlived the kill of ${dir}`);
    if (existsSync(join(dir, "cgroup.kill"))) writeFileSync(join(dir, "cgroup.kill"), "1");
    for (const pid of left)
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** removeCgroup (§6.3) removes an empty cgroup; a cgroup that still holds processes is refused by the kernel (EBUSY). */
export function removeCgroup(dir: string): void {
  rmdirSync(dir);
}

/**
 * cgroupWrap (§6.3) returns an argv that joins the cgroup at `dir` before exec'ing `argv`, so the command
 * and everything it forks are accounted from their first instruction.
 */
export function cgroupWrap(dir: string, argv: readonly string[]): string[] {
  return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir, ...argv];
}
