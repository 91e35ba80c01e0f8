// §6.1–§6.3 The host meter: per-interval readings for a running process or cgroup. The provenance
// of each figure follows §6.2 strictly: RAPL energy is `measured` only when the unit has the machine
// to itself, `attributed` by the unit's share of CPU time when it shares it, and where RAPL is
// absent the figure is `estimated` from CPU time and resident memory, with "rapl" listed as absent.
import {
  attribute,
  CCF_DEFAULTS,
  estimateCpu,
  estimateMemory,
  measure,
  type EnergyComponent,
  type MeterReading,
} from "@sbx/sandbox-attest/energy";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { HostError, isHostError } from "../errors.ts";
import { cgroupMounts, cgroupPids, cgroupVersion, readCgroupCpuUs } from "./cgroup.ts";
import { procCpuUs, procRssBytes, readMachineCpuUs, readProcStat, PROC_ROOT } from "./proc.ts";
import { isDramZone, isPackageZone, POWERCAP_ROOT, raplAccumulator, type RaplAccumulator } from "./rapl.ts";

/** What a meter meters: one process (and the children it reaps), or a cgroup and everything in it. */
export type MeterTarget = { readonly pid: number } | { readonly cgroup: string };

/** Options of startMeter. */
export interface MeterOptions {
  /** The powercap root (default /sys/class/powercap); tests pass a fake tree. */
  readonly powercapRoot?: string;
  /** The /proc root (default /proc). */
  readonly procRoot?: string;
  /** The unit has the machine to itself, so RAPL counters are its own (`measured`). Default false. */
  readonly dedicated?: boolean;
  /** Background sampling period in ms for memory integration and RAPL wraps (default 100; 0: none). */
  readonly sampleMs?: number;
  /** Model coefficients for estimated figures (default CCF_DEFAULTS). */
  readonly coefficients?: Partial<typeof CCF_DEFAULTS>;
  /** For a cgroup target, the root of its hierarchy (default: the mount that holds it). */
  readonly cgroupRoot?: string;
  /** Clock in epoch ms (default Date.now). */
  readonly now?: () => number;
}

/** A running meter. Each `sample()` closes the current interval and returns its reading. */
export interface Meter {
  /** The sources the meter reads: the unit's CPU counter, the machine's, and RAPL zones found. */
  readonly sources: { readonly cpu: string; readonly machine: string; readonly rapl: readonly string[] };
  sample(): MeterReading;
  /**
   * Reads the interval so far without closing it: what sample() would return now, the next
   * sample() or stop() still covering the whole interval (a live budget check reads this).
   */
  peek(): MeterReading;
  /** Closes the last interval, stops background sampling, and returns the last reading. */
  stop(): MeterReading;
}

interface Readers {
  readonly cpu: () => bigint;
  readonly machine: () => bigint;
  readonly pids: () => number[];
  readonly cpuSource: string;
  readonly machineSource: string;
}

function cgroupRootOf(path: string): string {
  const m = cgroupMounts();
  const root = [m.v2, m.cpuacct].find((r) => r !== null && path.startsWith(r + "/"));
  if (root === undefined || root === null)
    throw new HostError("CgroupUnavailable", `${path} is under no mounted hierarchy`);
  return root;
}

function readersFor(target: MeterTarget, o: MeterOptions): Readers {
  const procRoot = o.procRoot ?? PROC_ROOT;
  if ("pid" in target) {
    return {
      cpu: () => procCpuUs(readProcStat(target.pid, procRoot)),
      machine: () => readMachineCpuUs(procRoot),
      pids: () => [target.pid],
      cpuSource: "proc:stat",
      machineSource: "proc:stat.cpu",
    };
  }
  const path = target.cgroup;
  const root = o.cgroupRoot ?? cgroupRootOf(path);
  const label = cgroupVersion(path) === 2 ? "cgroup2:cpu.stat" : "cgroup1:cpuacct.usage";
  // Older kernels keep no cpu.stat in the v2 root: the machine's total then comes from /proc/stat.
  const rootCounts = existsSync(join(root, "cpu.stat")) || existsSync(join(root, "cpuacct.usage"));
  return {
    cpu: () => readCgroupCpuUs(path),
    machine: rootCounts ? () => readCgroupCpuUs(root) : () => readMachineCpuUs(procRoot),
    pids: () => cgroupPids(path),
    cpuSource: label,
    machineSource: rootCounts ? `${label}@root` : "proc:stat.cpu",
  };
}

function rssKib(pids: readonly number[], procRoot: string): bigint {
  let total = 0n;
  for (const pid of pids) {
    try {
      total += procRssBytes(readProcStat(pid, procRoot));
    } catch (e) {
      if (!isHostError(e, "ProcessGone")) throw e;
    }
  }
  return total / 1024n;
}

/** Interval accumulators: the counters at the interval's start and the memory integral so far. */
interface Interval {
  t0: number;
  lastT: number;
  cpu0: bigint;
  cpuLast: bigint;
  mach0: bigint;
  kibMs: bigint;
  lastKib: bigint;
}

function ratioOf(unitUs: bigint, machineUs: bigint, basis: string) {
  // Sampling skew can put the unit's time above the machine's: the share is then 1, never more.
  const denominator = machineUs < unitUs ? unitUs : machineUs;
  return denominator === 0n
    ? { numerator: 0n, denominator: 1n, basis }
    : { numerator: unitUs, denominator, basis };
}

function raplComponents(
  rapl: RaplAccumulator,
  dedicated: boolean,
  ratio: ReturnType<typeof ratioOf>,
  keep = false,
): { cpu: EnergyComponent | null; memory: EnergyComponent | null } {
  const pick = (
    domain: "cpu" | "memory",
    test: typeof isPackageZone,
    src: string,
  ): EnergyComponent | null => {
    if (!rapl.zones.some(test)) return null;
    const uj = keep ? rapl.peek(test) : rapl.take(test);
    return dedicated ? measure(domain, src, uj) : attribute(domain, src, uj, ratio);
  };
  return { cpu: pick("cpu", isPackageZone, "rapl:package"), memory: pick("memory", isDramZone, "rapl:dram") };
}

/**
 * startMeter starts metering `target` (§6.1): a pid (CPU time from /proc/<pid>/stat, including
 * reaped children; CPU time spent after the last sample before the process is reaped is lost, so
 * prefer a cgroup) or a cgroup path (v2 cpu.stat or v1 cpuacct.usage; nothing is lost). Refuses a
 * target it cannot read at the start (`ProcessGone`, `BadProcStat`, `BadCgroupStat`,
 * `CgroupUnavailable`) and a malformed RAPL tree (`BadPowercap`); calls after stop() are `MeterStopped`.
 */
export function startMeter(target: MeterTarget, o: MeterOptions = {}): Meter {
  const r = readersFor(target, o);
  const now = o.now ?? Date.now;
  const procRoot = o.procRoot ?? PROC_ROOT;
  const rapl = raplAccumulator(o.powercapRoot ?? POWERCAP_ROOT);
  const coefficients = { ...CCF_DEFAULTS, ...o.coefficients };
  const t = now();
  const cpu = r.cpu();
  const iv: Interval = {
    t0: t,
    lastT: t,
    cpu0: cpu,
    cpuLast: cpu,
    mach0: r.machine(),
    kibMs: 0n,
    lastKib: rssKib(r.pids(), procRoot),
  };
  let stopped = false;

  const poll = (): void => {
    const t1 = now();
    iv.kibMs += iv.lastKib * BigInt(Math.max(0, t1 - iv.lastT));
    iv.lastT = t1;
    iv.lastKib = rssKib(r.pids(), procRoot);
    try {
      iv.cpuLast = r.cpu();
    } catch (e) {
      if (!isHostError(e, "ProcessGone")) throw e; // a finished process keeps its last reading
    }
    rapl?.poll();
  };
  // A background poll must never throw into the event loop: its failure is kept for the next reading.
  let failed: Error | null = null;
  const background = (): void => {
    try {
      poll();
    } catch (e) {
      failed ??= e instanceof Error ? e : new Error(String(e));
    }
  };
  const timer = (o.sampleMs ?? 100) > 0 ? setInterval(background, o.sampleMs ?? 100) : null;
  timer?.unref();

  // The reading of the interval so far; `keep` leaves the interval open (peek), else the next starts.
  const read = (keep: boolean): MeterReading => {
    if (stopped) throw new HostError("MeterStopped", "the meter was stopped");
    if (failed !== null) throw failed;
    poll();
    const mach = r.machine();
    const unitUs = iv.cpuLast - iv.cpu0;
    const ratio = ratioOf(unitUs, mach - iv.mach0, `cpu_us ${r.cpuSource} / ${r.machineSource}`);
    const fromRapl = rapl
      ? raplComponents(rapl, o.dedicated ?? false, ratio, keep)
      : { cpu: null, memory: null };
    const absent = rapl === null ? ["rapl"] : fromRapl.memory === null ? ["rapl.dram"] : [];
    if (rapl !== null && fromRapl.cpu === null) absent.push("rapl.package");
    const components: EnergyComponent[] = [
      fromRapl.cpu ?? estimateCpu(unitUs, { source: r.cpuSource, coefficients: coefficients.cpu }),
      fromRapl.memory ??
        estimateMemory(iv.kibMs, { source: "proc:stat.rss", coefficients: coefficients.memory }),
    ];
    const reading: MeterReading = { start_ms: iv.t0, end_ms: iv.lastT, components, absent: absent.sort() };
    if (!keep) Object.assign(iv, { t0: iv.lastT, cpu0: iv.cpuLast, mach0: mach, kibMs: 0n });
    return reading;
  };
  const close = (): MeterReading => read(false);

  return {
    sources: { cpu: r.cpuSource, machine: r.machineSource, rapl: rapl?.zones.map((z) => z.id) ?? [] },
    sample: close,
    peek: () => read(true),
    stop() {
      if (timer) clearInterval(timer);
      const last = close();
      stopped = true;
      return last;
    },
  };
}
