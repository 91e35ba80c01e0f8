// @sbx/host/meter — §6 meters on Linux: RAPL via powercap, cgroup v1/v2 CPU accounting, /proc.
export {
  POWERCAP_ROOT,
  isDramZone,
  isPackageZone,
  raplAccumulator,
  raplDelta,
  readRaplZones,
} from "./rapl.ts";
export type { RaplAccumulator, RaplZone } from "./rapl.ts";
export {
  PROC_ROOT,
  parseProcStat,
  procCpuUs,
  procRssBytes,
  readMachineCpuUs,
  readProcStat,
  systemConstants,
  ticksToUs,
} from "./proc.ts";
export type { ProcStat } from "./proc.ts";
export {
  addToCgroup,
  cgroupMounts,
  cgroupPids,
  cgroupVersion,
  cgroupWrap,
  createUnitCgroup,
  killCgroup,
  parseCpuStat,
  parseMountinfo,
  readCgroupCpuUs,
  readCpuacctV1,
  readCpuStatV2,
  removeCgroup,
} from "./cgroup.ts";
export type { CgroupMounts, UnitCgroup } from "./cgroup.ts";
export { startMeter } from "./meter.ts";
export type { Meter, MeterOptions, MeterTarget } from "./meter.ts";
export { meterCommand } from "./command.ts";
export type { MeteredCommand, MeteredExit } from "./command.ts";
