// §13.7.4 An interval whose supervisor is gone. A durable run's sandbox outlives its supervisor (no
// --die-with-parent): its processes stay in the run's cgroup. While an interval is open the
// supervisor keeps a small file naming itself (pid and start time), the head the interval opened
// on, the interval's start, the cgroup and its CPU counter at the start, and, every second, its last
// reading. A later command that finds the file with its supervisor gone ends the processes and
// reads the interval from the cgroup's own counters (else the last reading), as estimated figures;
// recover.ts (recoverOrphan) attests and records it.
import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDigest, type Digest } from "@sbx/wire";
import { estimateCpu, estimateMemory, type MeterReading } from "@sbx/sandbox-attest/energy";
import { HostError } from "../errors.ts";
import { killCgroup, readCgroupCpuUs } from "../meter/cgroup.ts";
import { removeCgroupDir } from "../sandbox/cgroup.ts";
import { startTicks } from "./lock.ts";

/** The code a recovered interval's outcome carries in `stopped` (§7.2 item 2, §13.7.4). */
export const SUPERVISOR_LOST = "SupervisorLost";

/** What the supervisor keeps about its open interval (see the file comment). */
export interface OpenInterval {
  readonly pid: number;
  readonly ticks: string;
  readonly head: Digest;
  readonly start_ms: number;
  /** The run's cgroup directories, v2 first, and the one whose CPU counter the meter reads. */
  readonly cgroups: readonly string[];
  readonly meter: string;
  /** The meter cgroup's CPU counter (µs) when the interval opened. */
  readonly cpu0_us: string;
  /** The supervisor's last reading: when, the CPU counter then, the resident KiB then. */
  readonly last: { readonly at_ms: number; readonly cpu_us: string; readonly rss_kib: string };
}

/** residentKib: the memory the cgroup holds now (cgroup2 memory.current, v1 memory.usage_in_bytes), or null. */
function residentKib(dirs: readonly string[]): bigint | null {
  for (const d of dirs)
    for (const f of ["memory.peak", "memory.current", "memory.max_usage_in_bytes"])
      try {
        const t = readFileSync(join(d, f), "utf8").trim();
        if (/^\d{1,20}$/.test(t)) return BigInt(t) / 1024n;
      } catch {
        // not this controller here
      }
  return null;
}

/** openInterval describes the interval a supervisor (this process) opens now on `head`. */
export function openInterval(head: Digest, cgroups: readonly string[], meter: string): OpenInterval {
  const now = Date.now();
  const cpu = readCgroupCpuUs(meter).toString();
  return {
    pid: process.pid,
    ticks: startTicks(process.pid) ?? "0",
    head,
    start_ms: now,
    cgroups: [...cgroups],
    meter,
    cpu0_us: cpu,
    last: { at_ms: now, cpu_us: cpu, rss_kib: (residentKib(cgroups) ?? 0n).toString() },
  };
}

/** lastReading: `o` with the cgroup's counters now as its last reading (o itself when they cannot be read). */
export function lastReading(o: OpenInterval): OpenInterval {
  try {
    const cpu = readCgroupCpuUs(o.meter).toString();
    const rss = (residentKib(o.cgroups) ?? BigInt(o.last.rss_kib)).toString();
    return { ...o, last: { at_ms: Date.now(), cpu_us: cpu, rss_kib: rss } };
  } catch {
    return o;
  }
}

/** writeOpenInterval replaces the file at `path` whole (a temp file renamed over it). */
export function writeOpenInterval(path: string, o: OpenInterval): void {
  const tmp = `${path}.${String(process.pid)}.tmp`;
  writeFileSync(tmp, JSON.stringify(o) + "\n", { mode: 0o600 });
  renameSync(tmp, path);
}

/** dropOpenInterval removes the file (the interval was sealed, or recovered). */
export function dropOpenInterval(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // none
  }
}

const AMOUNT = /^\d{1,20}$/;

/** readOpenInterval reads the file at `path`: null when there is none; `BadIntervalFile` when it is not one. */
export function readOpenInterval(path: string): OpenInterval | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  let v: Partial<OpenInterval>;
  try {
    v = JSON.parse(text) as Partial<OpenInterval>;
  } catch (e) {
    throw new HostError("BadIntervalFile", `${path} is not JSON`, { cause: e });
  }
  const l = v.last;
  const ok =
    Number.isSafeInteger(v.pid) &&
    typeof v.ticks === "string" &&
    AMOUNT.test(v.ticks) &&
    typeof v.head === "string" &&
    isDigest(v.head) &&
    Number.isSafeInteger(v.start_ms) &&
    Array.isArray(v.cgroups) &&
    v.cgroups.every((d) => typeof d === "string" && d.startsWith("/sys/fs/cgroup/")) &&
    typeof v.meter === "string" &&
    v.cgroups.includes(v.meter) &&
    typeof v.cpu0_us === "string" &&
    AMOUNT.test(v.cpu0_us) &&
    l !== undefined &&
    Number.isSafeInteger(l.at_ms) &&
    typeof l.cpu_us === "string" &&
    AMOUNT.test(l.cpu_us) &&
    typeof l.rss_kib === "string" &&
    AMOUNT.test(l.rss_kib);
  if (!ok) throw new HostError("BadIntervalFile", `${path} does not describe an open interval`);
  return v as OpenInterval;
}

/** supervisorGone: the process that wrote `o` is no longer alive (its pid is gone or names another). */
export function supervisorGone(o: OpenInterval): boolean {
  return startTicks(o.pid) !== o.ticks;
}

/**
 * endOrphan (§13.7.4) ends every process left in the orphaned interval's cgroup and returns the
 * interval's reading from the cgroup's own counters: CPU time since the interval opened
 * (`ccf.cpu/1`) and its peak resident memory over the interval (`ccf.memory/1`), both `estimated`,
 * sources `recovered:…`; when the cgroup is gone, the supervisor's last reading. The cgroups stay
 * (removeOrphanCgroups, after the interval is recorded), so a retry reads the same counters.
 */
export async function endOrphan(o: OpenInterval): Promise<MeterReading> {
  const live = existsSync(o.meter);
  const rss = (live ? residentKib(o.cgroups) : null) ?? BigInt(o.last.rss_kib);
  for (const d of o.cgroups) if (existsSync(d)) await killCgroup(d);
  let cpu = BigInt(o.last.cpu_us);
  let end = o.last.at_ms;
  let source = "recovered:supervisor.last";
  if (live)
    try {
      cpu = readCgroupCpuUs(o.meter);
      end = Math.max(Date.now(), o.start_ms);
      source = "recovered:cgroup.cpu";
    } catch {
      // the cgroup went in between: the last reading stands
    }
  const cpu0 = BigInt(o.cpu0_us);
  const vcpu = cpu > cpu0 ? cpu - cpu0 : 0n;
  const kibMs = rss * BigInt(Math.max(0, end - o.start_ms));
  return {
    start_ms: o.start_ms,
    end_ms: end,
    components: [
      estimateCpu(vcpu, { source }),
      estimateMemory(kibMs, { source: live ? "recovered:cgroup.memory" : "recovered:supervisor.last" }),
    ],
    absent: ["meter"],
  };
}

/** removeOrphanCgroups removes the orphaned interval's (empty) cgroups. */
export function removeOrphanCgroups(o: OpenInterval): void {
  // One gone, or still busy, is left: sweepStale takes an empty one later (its hold is gone first).
  for (const d of [...o.cgroups].reverse()) removeCgroupDir(d);
}
