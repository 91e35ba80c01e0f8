// Measurement helpers for bench/: medians over repeated timed runs, and readable rates.
import { spawnSync } from "node:child_process";

/** median of a list of numbers. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** timeRuns runs `fn` `runs` times (after one warm-up) and returns the median seconds per run. */
export function timeRuns(runs: number, fn: () => void): number {
  fn();
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    fn();
    xs.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return median(xs);
}

/** timeRunsAsync is timeRuns for async work. */
export async function timeRunsAsync(runs: number, fn: () => Promise<void>): Promise<number> {
  await fn();
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    await fn();
    xs.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return median(xs);
}

/** rate formats operations per second. */
export function rate(opsPerSec: number): string {
  if (opsPerSec >= 1e6) return `${(opsPerSec / 1e6).toFixed(2)}M/s`;
  if (opsPerSec >= 1e3) return `${(opsPerSec / 1e3).toFixed(1)}k/s`;
  return `${opsPerSec.toFixed(1)}/s`;
}

/** gbps formats bytes per second as GB/s (10^9). */
export function gbps(bytesPerSec: number): string {
  return `${(bytesPerSec / 1e9).toFixed(3)} GB/s`;
}

/** row prints one aligned result line: name, figure, ratio to the anchor. */
export function row(name: string, figure: string, ratio?: number, anchor?: string): void {
  const r = ratio === undefined ? "" : `  ${ratio.toFixed(2)}× ${anchor ?? "anchor"}`;
  console.log(`  ${name.padEnd(46)} ${figure.padStart(14)}${r}`);
}

/** timeCommand runs a command `runs` times and returns the median wall seconds; null if it cannot run. */
export function timeCommand(runs: number, cmd: string, args: readonly string[]): number | null {
  const xs: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    const t = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { stdio: "ignore" });
    if (r.error || r.status !== 0) return null;
    if (i > 0) xs.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return median(xs);
}
