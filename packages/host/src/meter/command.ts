// §6.1 Metering one command end to end: a fresh cgroup per command (so CPU time is counted from the
// first instruction to the last, children included), a meter on it, and the reading at exit.
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { MeterReading } from "@sbx/sandbox-attest/energy";
import { isHostError } from "../errors.ts";
import {
  cgroupWrap,
  createUnitCgroup,
  killCgroup,
  removeCgroup,
  type CgroupMounts,
  type UnitCgroup,
} from "./cgroup.ts";
import { startMeter, type MeterOptions } from "./meter.ts";

/** What a metered command ends with. */
export interface MeteredExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The reading of the whole run of the command (one interval). */
  readonly reading: MeterReading;
  /** The cgroup it ran in, or null when none could be made (then it was metered by pid). */
  readonly cgroup: UnitCgroup | null;
}

/** A started metered command: the child (for its stdio) and its end. */
export interface MeteredCommand {
  readonly child: ChildProcess;
  readonly done: Promise<MeteredExit>;
}

function exited(child: ChildProcess): Promise<[number | null, NodeJS.Signals | null]> {
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      resolve([code, signal]);
    });
  });
}

/**
 * meterCommand runs `argv` metered (§6.1). Where this host lets it create a cgroup (root, cgroup2 or
 * v1 cpuacct mounted), the command joins a fresh cgroup before exec and is metered by it; otherwise
 * it is metered by pid and the reading lists "cgroup" as absent. `mounts` overrides the cgroup
 * mounts found in /proc/self/mountinfo. At exit, processes it left in the cgroup are killed and the
 * cgroup is removed.
 * `done` rejects when the command cannot be spawned.
 */
export function meterCommand(
  argv: readonly string[],
  o: MeterOptions & { readonly spawn?: SpawnOptions; readonly mounts?: CgroupMounts } = {},
): MeteredCommand {
  if (argv.length === 0) throw new RangeError("meterCommand: argv is empty");
  let cg: UnitCgroup | null = null;
  try {
    cg = createUnitCgroup(`sbx-meter-${process.pid}-${randomBytes(6).toString("hex")}`, o.mounts);
  } catch (e) {
    if (!isHostError(e, "CgroupUnavailable")) throw e;
  }
  const [file, ...args] = cg ? cgroupWrap(cg.path, argv) : argv;
  const child = spawn(file ?? "", args, o.spawn ?? { stdio: "ignore" });
  const ended = exited(child); // listens for "error" before anything else can throw
  if (cg === null && child.pid === undefined)
    return { child, done: ended.then(() => Promise.reject(new Error("spawn failed"))) };
  const meter = startMeter(cg ? { cgroup: cg.path } : { pid: child.pid ?? -1 }, o);
  const done = ended.then(async ([code, signal]) => {
    let r: MeterReading;
    try {
      // What the command left behind is killed first, so its CPU time is in the reading and the
      // cgroup can be removed (a cgroup holding a process cannot: EBUSY).
      if (cg) await killCgroup(cg.path);
      r = meter.stop();
    } finally {
      if (cg) removeCgroup(cg.path);
    }
    const reading = cg ? r : { ...r, absent: [...r.absent, "cgroup"].sort() };
    return { code, signal, reading, cgroup: cg };
  });
  return { child, done };
}
