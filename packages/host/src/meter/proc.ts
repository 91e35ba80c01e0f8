// §6.3 /proc as a meter source: a process's CPU time (utime + stime, plus cutime + cstime of the
// children it has waited for) and resident set from /proc/<pid>/stat, and the machine's busy CPU
// time from /proc/stat, both in clock ticks.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";

/** The default /proc root (§6.3); tests may pass another. */
export const PROC_ROOT = "/proc";

/** What /proc/<pid>/stat says about a process, times in clock ticks, rss in pages. */
export interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  readonly state: string;
  readonly utime: bigint;
  readonly stime: bigint;
  readonly cutime: bigint;
  readonly cstime: bigint;
  readonly rss_pages: bigint;
}

let sysconf: { hz: number; page: number } | null = null;

/** systemConstants (§6.3) returns USER_HZ and the page size (getconf; 100 and 4096 where getconf is missing). */
export function systemConstants(): { hz: number; page: number } {
  if (sysconf !== null) return sysconf;
  const get = (name: string, dflt: number): number => {
    try {
      const n = Number(execFileSync("getconf", [name], { encoding: "utf8" }).trim());
      return Number.isSafeInteger(n) && n > 0 ? n : dflt;
    } catch {
      return dflt;
    }
  };
  sysconf = { hz: get("CLK_TCK", 100), page: get("PAGESIZE", 4096) };
  return sysconf;
}

function tick(field: string | undefined, what: string): bigint {
  if (field === undefined || !/^-?\d{1,20}$/.test(field))
    throw new HostError("BadProcStat", `${what}: ${field}`);
  const n = BigInt(field);
  return n < 0n ? 0n : n;
}

/**
 * parseProcStat (§6.3) parses the text of /proc/<pid>/stat. The command name is in parentheses and may
 * itself hold spaces and parentheses, so fields are split after the last ")". Refuses any other
 * form (`BadProcStat`).
 */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 1 || close < open) throw new HostError("BadProcStat", "no (comm) field");
  const f = text
    .slice(close + 2)
    .trim()
    .split(" ");
  // After comm: state is field 3; utime 14, stime 15, cutime 16, cstime 17, rss 24 (proc(5)).
  const at = (n: number): string | undefined => f[n - 3];
  return {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    state: at(3) ?? "?",
    utime: tick(at(14), "utime"),
    stime: tick(at(15), "stime"),
    cutime: tick(at(16), "cutime"),
    cstime: tick(at(17), "cstime"),
    rss_pages: tick(at(24), "rss"),
  };
}

/** readProcStat reads /proc/<pid>/stat (§6.3). Refuses a process that is gone (`ProcessGone`) or a malformed file (`BadProcStat`). */
export function readProcStat(pid: number, root: string = PROC_ROOT): ProcStat {
  let text: string;
  try {
    text = readFileSync(join(root, String(pid), "stat"), "utf8");
  } catch (e) {
    throw new HostError("ProcessGone", `no /proc entry for ${pid}`, { cause: e });
  }
  return parseProcStat(text);
}

/** ticksToUs (§6.3) converts clock ticks to microseconds at USER_HZ `hz`. */
export function ticksToUs(ticks: bigint, hz: number): bigint {
  return (ticks * 1_000_000n) / BigInt(hz);
}

/** procCpuUs (§6.3) is a process's CPU time in µs: its own plus that of the children it has reaped. */
export function procCpuUs(s: ProcStat, hz: number = systemConstants().hz): bigint {
  return ticksToUs(s.utime + s.stime + s.cutime + s.cstime, hz);
}

/** procRssBytes (§6.3) is a process's resident set in bytes. */
export function procRssBytes(s: ProcStat, page: number = systemConstants().page): bigint {
  return s.rss_pages * BigInt(page);
}

/**
 * readMachineCpuUs reads the machine's busy CPU time from the "cpu" line of /proc/stat (§6.3):
 * user + nice + system + irq + softirq + steal, in µs (idle and iowait are not busy; guest time is
 * already inside user). Refuses a malformed line (`BadProcStat`).
 */
export function readMachineCpuUs(root: string = PROC_ROOT, hz: number = systemConstants().hz): bigint {
  const line = readFileSync(join(root, "stat"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("cpu "));
  if (line === undefined) throw new HostError("BadProcStat", "/proc/stat has no cpu line");
  const v = line.trim().split(/\s+/).slice(1);
  const busy = [0, 1, 2, 5, 6, 7].reduce((s, i) => s + tick(v[i] ?? "0", `cpu[${i}]`), 0n);
  return ticksToUs(busy, hz);
}
