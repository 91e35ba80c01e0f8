// §6.1–§6.3 the meter: provenance chosen by what the host has (fake RAPL shared or dedicated, RAPL
// absent), real child processes metered by pid and by cgroup, and readings made into a verified chain.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import {
  assertComponent,
  makeReceipt,
  startEnergyChain,
  verifyEnergyChain,
  type AttributedComponent,
  type EnergyComponent,
} from "@sbx/sandbox-attest/energy";
import { meterCommand, procCpuUs, readProcStat, startMeter } from "@sbx/host/meter";
import { busyChild, exitOf, fakePowercap, hasCode, setCounter, sleep } from "./fakes.ts";

const byDomain = (cs: readonly EnergyComponent[], d: string) => cs.find((c) => c.domain === d);

/** spin waits until process `pid` has had `us` of CPU (the machine is shared; at most 5 s). */
async function spin(pid: number, us: bigint): Promise<void> {
  const start = procCpuUs(readProcStat(pid));
  for (let i = 0; i < 100 && procCpuUs(readProcStat(pid)) - start < us; i++) await sleep(50);
}

test("RAPL present, machine shared: package energy attributed by the unit's CPU share", async () => {
  const root = fakePowercap();
  const child = busyChild(3_000);
  const m = startMeter({ pid: child.pid ?? -1 }, { powercapRoot: root, sampleMs: 50 });
  await spin(child.pid ?? -1, 200_000n);
  setCounter(root, "intel-rapl:0", 41_000_000n); // 40 J of package energy in the interval
  setCounter(root, "intel-rapl:0:1", 3_002_000n); // 3 J of DRAM
  const r = m.stop();
  child.kill("SIGKILL");
  await exitOf(child);
  for (const c of r.components) assertComponent(c);
  const cpu = byDomain(r.components, "cpu") as AttributedComponent;
  assert.equal(cpu.provenance, "attributed");
  assert.equal(cpu.source, "rapl:package");
  assert.equal(cpu.shared_uj, "40000000");
  assert.ok(BigInt(cpu.ratio.numerator) > 0n && BigInt(cpu.ratio.numerator) <= BigInt(cpu.ratio.denominator));
  assert.equal(byDomain(r.components, "memory")?.provenance, "attributed");
  assert.deepEqual(r.absent, []);
  assert.throws(() => m.sample(), hasCode("MeterStopped"));
});

test("RAPL present, machine dedicated: measured; no DRAM zone: memory estimated and rapl.dram absent", () => {
  const root = fakePowercap({ dram: false });
  const m = startMeter({ pid: process.pid }, { powercapRoot: root, sampleMs: 0, dedicated: true });
  setCounter(root, "intel-rapl:0", 1_250_000n);
  const r = m.stop();
  assert.deepEqual(byDomain(r.components, "cpu"), {
    domain: "cpu",
    uj: "250000",
    provenance: "measured",
    source: "rapl:package",
  });
  assert.equal(byDomain(r.components, "memory")?.provenance, "estimated");
  assert.deepEqual(r.absent, ["rapl.dram"]);
});

test("RAPL absent: CPU and memory estimated from /proc with the model, rapl listed as absent", async () => {
  const child = busyChild(3_000);
  const m = startMeter({ pid: child.pid ?? -1 }, { powercapRoot: "/nonexistent", sampleMs: 50 });
  await spin(child.pid ?? -1, 100_000n);
  const first = m.sample();
  await spin(child.pid ?? -1, 50_000n);
  const second = m.stop();
  child.kill("SIGKILL");
  await exitOf(child);
  for (const r of [first, second]) {
    assert.deepEqual(r.absent, ["rapl"]);
    assert.deepEqual(
      r.components.map((c) => [c.domain, c.provenance, c.source]),
      [
        ["cpu", "estimated", "proc:stat"],
        ["memory", "estimated", "proc:stat.rss"],
      ],
    );
    for (const c of r.components) assertComponent(c);
  }
  assert.equal(second.start_ms, first.end_ms);
  assert.ok(
    BigInt(byDomain(first.components, "memory")?.uj ?? "0") > 0n,
    "a resident node process costs memory energy",
  );
});

test("this machine: the meter reports RAPL absent exactly when /sys/class/powercap has no zone", () => {
  const m = startMeter({ pid: process.pid }, { sampleMs: 0 });
  const r = m.stop();
  const hasRapl = existsSync("/sys/class/powercap/intel-rapl:0/energy_uj");
  assert.equal(r.absent.includes("rapl"), !hasRapl);
  assert.equal(m.sources.rapl.length > 0, hasRapl);
});

test("a real command metered in its own cgroup becomes a signed, verified receipt chain", async () => {
  const host = testKey("host");
  const unit = addressOf({ unit: "meter-test" });
  const grants = addressOf({ grants: "meter-test" });
  const code = "let x = 0; const t = Date.now(); while (Date.now() - t < 300) x++;";
  const run = meterCommand([process.execPath, "-e", code], { sampleMs: 50 });
  const done = await run.done;
  assert.equal(done.code, 0);
  assert.ok(done.cgroup, "root with a writable cgroup hierarchy: the command ran in its own cgroup");
  assert.equal(existsSync(done.cgroup.path), false, "the cgroup is removed at exit");
  const cpu = byDomain(done.reading.components, "cpu");
  assert.ok(cpu && BigInt(cpu.uj) > 0n);
  assert.match(cpu.source, /^(cgroup2:cpu\.stat|cgroup1:cpuacct\.usage|rapl:package)$/);
  const first = makeReceipt(startEnergyChain(unit, grants), done.reading, host);
  const idle = {
    start_ms: done.reading.end_ms,
    end_ms: done.reading.end_ms + 10,
    components: [],
    absent: [],
  };
  const second = makeReceipt(first.state, idle, host);
  const v = verifyEnergyChain([first.envelope, second.envelope], {
    unit_id: unit,
    grants_id: grants,
    hosts: [host.did],
    head: second.state.head,
  });
  assert.equal(v.total_uj, done.reading.components.reduce((s, c) => s + BigInt(c.uj), 0n).toString());
});

test("a command in its own cgroup on a shared RAPL machine: attributed by cgroup CPU time over the root's", async () => {
  const root = fakePowercap();
  const code = "let x = 0; const t = Date.now(); while (Date.now() - t < 300) x++;";
  const run = meterCommand([process.execPath, "-e", code], { sampleMs: 20, powercapRoot: root });
  setCounter(root, "intel-rapl:0", 21_000_000n); // 20 J drawn by the package while it runs
  const done = await run.done;
  const cpu = byDomain(done.reading.components, "cpu") as AttributedComponent;
  assertComponent(cpu);
  assert.equal(cpu.provenance, "attributed");
  assert.equal(cpu.shared_uj, "20000000");
  assert.match(cpu.ratio.basis, /^cpu_us cgroup(2:cpu\.stat|1:cpuacct\.usage) \/ /);
  const [n, d] = [BigInt(cpu.ratio.numerator), BigInt(cpu.ratio.denominator)];
  assert.ok(n > 0n && n <= d, `share ${n}/${d}`);
});

test("a source that breaks during background sampling is reported by the next reading, not thrown into the event loop", async () => {
  const root = fakePowercap();
  const m = startMeter({ pid: process.pid }, { powercapRoot: root, sampleMs: 10 });
  writeFileSync(join(root, "intel-rapl:0", "energy_uj"), "garbage\n");
  await sleep(60);
  assert.throws(() => m.stop(), hasCode("BadPowercap"));
});

test("with no cgroup to be had, a command is metered by pid and the reading lists cgroup as absent", async () => {
  const code = "let x = 0; const t = Date.now(); while (Date.now() - t < 300) x++;";
  const run = meterCommand([process.execPath, "-e", code], {
    sampleMs: 20,
    mounts: { v2: null, cpuacct: null },
  });
  const done = await run.done;
  assert.equal(done.code, 0);
  assert.equal(done.cgroup, null);
  assert.ok(done.reading.absent.includes("cgroup"));
  const cpu = byDomain(done.reading.components, "cpu");
  assert.ok(cpu);
  assert.equal(cpu.source === "proc:stat" || cpu.source === "rapl:package", true);
  for (const c of done.reading.components) assertComponent(c);
});
