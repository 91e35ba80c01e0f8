// §15.3 The energy figures of pooled items on this host. No counter here belongs to one idle item,
// so every figure is an estimate by the §6.3 models, labelled with the activity it was fed:
// CPU time read from /proc (the host's own work provisioning the item, and the idle process's),
// resident memory of the idle process (/proc/<pid>/stat rss) and the workspace's allocated blocks.
import {
  estimateCpu,
  estimateMemory,
  estimateStorage,
  type EnergyComponent,
} from "@sbx/sandbox-attest/energy";

const MIB = 1_048_576n;

/** provisionFigure: the CPU time spent creating an item (host side plus the idle process's start). */
export function provisionFigure(
  hostCpuUs: bigint,
  idleCpuUs: bigint,
  idleSource = "proc:<pid>/stat utime+stime",
): EnergyComponent[] {
  const source = idleCpuUs > 0n ? `proc:self cpuUsage + ${idleSource}` : "proc:self cpuUsage";
  // At least one microsecond: creating a folder is never free, and a zero would misstate it.
  return [estimateCpu(hostCpuUs + idleCpuUs > 0n ? hostCpuUs + idleCpuUs : 1n, { source })];
}

/** What one item held over an interval. */
export interface Residency {
  readonly ms: number;
  /** Resident bytes of the idle process (0 when there is none). */
  readonly rss: bigint;
  /** Bytes the workspace occupies on disk. */
  readonly storage: bigint;
  /** CPU µs the idle process used in the interval. */
  readonly cpu_us: bigint;
  /** Where rss and cpu_us were read (default: the idle process's /proc/<pid>/stat). */
  readonly sources?: { readonly memory: string; readonly cpu: string };
}

/** residencyFigure: memory, storage and any idle CPU over `r.ms` milliseconds (§15.3). */
export function residencyFigure(r: Residency): EnergyComponent[] {
  const ms = BigInt(r.ms);
  const out: EnergyComponent[] = [
    estimateStorage((r.storage * ms) / (MIB * 1000n), { source: "fs:workspace st_blocks" }),
  ];
  const src = r.sources ?? { memory: "proc:<pid>/stat rss", cpu: "proc:<pid>/stat utime+stime" };
  if (r.rss > 0n) out.unshift(estimateMemory((r.rss / 1024n) * ms, { source: src.memory }));
  if (r.cpu_us > 0n) out.push(estimateCpu(r.cpu_us, { source: src.cpu }));
  return out;
}
