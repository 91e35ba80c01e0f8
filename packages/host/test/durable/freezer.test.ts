// §13 The freezer on this host, both ways the reference host freezes a sandbox: cgroup v2
// cgroup.freeze (pure v2, and the unified tree of a hybrid host) and the v1 freezer (a v1-only
// host). A real process is frozen (the kernel confirms it, and its CPU time stands still while a
// busy loop would advance it), thawed (it runs again), and the idle figure is recomputable.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { modelEnergy, estimateMemory, estimateStorage } from "@sbx/sandbox-attest/energy";
import { freezeProcesses, isFrozen, thawProcesses, type FreezeTarget } from "../../src/durable/freezer.ts";
import { idleEnergy } from "../../src/durable/idle.ts";
import { hostHierarchies } from "../../src/sandbox/cgroup.ts";

function cpuTicks(pid: number): number {
  const s = readFileSync(`/proc/${String(pid)}/stat`, "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]);
}

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

/** A busy process in a fresh v2 cgroup of its own (the run's cgroup, as createRunCgroup makes it). */
async function busyInCgroup(name: string): Promise<{ pid: number; dir: string; stop: () => Promise<void> }> {
  const h = hostHierarchies();
  assert.ok(h.v2 !== null, "this host has a cgroup2 tree");
  const dir = join(h.v2, h.v2Self, name);
  mkdirSync(dir);
  const child = spawn("/bin/sh", ["-c", "while :; do :; done"], { stdio: "ignore" });
  const pid = await new Promise<number>((r) => child.once("spawn", () => r(child.pid ?? 0)));
  writeFileSync(join(dir, "cgroup.procs"), String(pid));
  const gone = new Promise((r) => child.once("exit", r));
  return {
    pid,
    dir,
    stop: async () => {
      child.kill("SIGKILL");
      await gone;
      rmdirSync(dir);
    },
  };
}

async function freezeAndThaw(t: FreezeTarget, procsDir: string, pid: number): Promise<void> {
  await freezeProcesses(t, [procsDir]);
  assert.ok(isFrozen(t), `${t.kind}: the kernel reports frozen`);
  const a = cpuTicks(pid);
  // While frozen the busy loop gets no CPU: its time stands still across a window in which, running,
  // it would advance (checked after the thaw below, so the window is not a timing assertion alone).
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(cpuTicks(pid), a, `${t.kind}: no CPU while frozen`);
  await thawProcesses(t);
  assert.ok(!isFrozen(t), `${t.kind}: thawed`);
  await until(() => cpuTicks(pid) > a);
}

test("cgroup v2 cgroup.freeze: a busy process frozen, confirmed, thawed", async () => {
  const p = await busyInCgroup(`sbx-freeze-test-${String(process.pid)}`);
  try {
    assert.ok(existsSync(join(p.dir, "cgroup.freeze")));
    await freezeAndThaw({ kind: "v2", dir: p.dir }, p.dir, p.pid);
  } finally {
    await p.stop();
  }
});

test("v1 freezer: the run's processes moved into a freezer cgroup, frozen, confirmed, thawed", async (t) => {
  const mount = "/sys/fs/cgroup/freezer";
  if (!existsSync(join(mount, "cgroup.procs"))) {
    // A pure cgroup v2 host has no v1 freezer: that way is then never taken (freezeTarget).
    t.diagnostic("no v1 freezer mounted on this host");
    assert.ok(hostHierarchies().v2 !== null, "a host without a v1 freezer has cgroup2");
    return;
  }
  const p = await busyInCgroup(`sbx-freeze-v1-${String(process.pid)}`);
  const target: FreezeTarget = { kind: "v1", dir: join(mount, `sbx-freeze-v1-${String(process.pid)}`) };
  try {
    await freezeAndThaw(target, p.dir, p.pid);
  } finally {
    await p.stop();
    rmdirSync(target.dir);
  }
});

test("idle energy: estimated, with a basis from which both models recompute the figure", () => {
  const e = idleEnergy({ parkedMs: 90_000, residentBytes: 512n << 20n, snapshotBytes: 3n << 30n });
  assert.equal(e.provenance, "estimated");
  const b = e.basis ?? {};
  const mem = estimateMemory(BigInt(b.kib_ms ?? "x"), {
    source: "s",
    coefficients: { uw_per_gib: Number(b.uw_per_gib) },
  });
  const sto = estimateStorage(BigInt(b.mib_s ?? "x"), {
    source: "s",
    coefficients: { uw_per_tib: Number(b.uw_per_tib) },
  });
  assert.equal(BigInt(e.uj), modelEnergy(mem.model) + modelEnergy(sto.model));
  assert.equal(b.kib_ms, String(524_288n * 90_000n));
  assert.equal(b.mib_s, String(3072n * 90n));
  const released = idleEnergy({ parkedMs: 90_000, residentBytes: 0n, snapshotBytes: 0n });
  assert.equal(released.uj, "0");
});
