// §6.3 cgroup readers against real cgroups: a child cgroup is created under each mounted hierarchy
// (v2 and v1 cpuacct), a busy child process is moved into it, its CPU time is read, and it is removed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import {
  addToCgroup,
  cgroupMounts,
  cgroupPids,
  createUnitCgroup,
  parseCpuStat,
  parseMountinfo,
  procCpuUs,
  readCgroupCpuUs,
  readProcStat,
  removeCgroup,
} from "@sbx/host/meter";
import { busyChild, exitOf, hasCode, sleep } from "./fakes.ts";

test("mountinfo: finds cgroup2 and the v1 cpuacct hierarchy", () => {
  const text = [
    "35 25 0:30 / /sys/fs/cgroup/cpuacct rw,relatime shared:11 - cgroup cgroup rw,cpuacct",
    "36 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory",
    "40 25 0:35 / /sys/fs/cgroup/unified rw,relatime shared:16 - cgroup2 cgroup2 rw",
  ].join("\n");
  assert.deepEqual(parseMountinfo(text), { v2: "/sys/fs/cgroup/unified", cpuacct: "/sys/fs/cgroup/cpuacct" });
  assert.deepEqual(parseMountinfo(""), { v2: null, cpuacct: null });
  assert.equal(parseCpuStat("usage_usec 1234\nuser_usec 1000\nsystem_usec 234\n"), 1234n);
  assert.throws(() => parseCpuStat("user_usec 1\n"), hasCode("BadCgroupStat"));
});

async function meterInCgroup(root: string, version: 1 | 2): Promise<void> {
  const only = version === 2 ? { v2: root, cpuacct: null } : { v2: null, cpuacct: root };
  const cg = createUnitCgroup(`sbx-test-${randomBytes(4).toString("hex")}`, only);
  let child: ReturnType<typeof busyChild> | null = null;
  try {
    assert.equal(cg.version, version);
    assert.equal(readCgroupCpuUs(cg.path), 0n);
    child = busyChild(5_000);
    const pid = child.pid ?? -1;
    addToCgroup(cg.path, pid);
    assert.deepEqual(cgroupPids(cg.path), [pid]);
    const before = procCpuUs(readProcStat(pid));
    // The machine is shared: wait until the child has had 150 ms of CPU, however long that takes.
    for (let i = 0; i < 100 && procCpuUs(readProcStat(pid)) - before < 150_000n; i++) await sleep(50);
    const own = procCpuUs(readProcStat(pid)) - before;
    const inCgroup = readCgroupCpuUs(cg.path);
    assert.ok(inCgroup >= 100_000n, `v${version}: ${inCgroup} µs of CPU counted`);
    // The cgroup counts from the move and was read last; /proc ticks are coarse (10 ms each).
    assert.ok(
      inCgroup + 20_000n >= own,
      `v${version}: cgroup ${inCgroup} µs, process ${own} µs since the move`,
    );
    child.kill("SIGKILL");
    await exitOf(child);
    // The count survives the process: nothing is lost at the end of a run.
    assert.ok(readCgroupCpuUs(cg.path) >= inCgroup);
    assert.deepEqual(cgroupPids(cg.path), []);
  } finally {
    // A failed assertion must not leave a busy process or a cgroup behind.
    if (child !== null && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exitOf(child);
    }
    removeCgroup(cg.path);
  }
  assert.equal(existsSync(cg.path), false);
}

test("real cgroups: at least one hierarchy is mounted and writable here", () => {
  const m = cgroupMounts();
  assert.ok(m.v2 !== null || m.cpuacct !== null, "no cgroup2 and no v1 cpuacct mount");
});

test("cgroup v2: cpu.stat of a child cgroup holding a busy process", async () => {
  const m = cgroupMounts();
  // A host without a cgroup2 mount has nothing to test here; the v1 test then carries the reader.
  if (m.v2 === null) assert.ok(m.cpuacct !== null);
  else await meterInCgroup(m.v2, 2);
});

test("cgroup v1: cpuacct.usage of a child cgroup holding a busy process", async () => {
  const m = cgroupMounts();
  // Pure cgroup2 hosts (most current distributions) have no cpuacct hierarchy.
  if (m.cpuacct === null) assert.ok(m.v2 !== null);
  else await meterInCgroup(m.cpuacct, 1);
});
