// §5.3 Resources: the run's cgroup limits memory, CPU and processes; an OOM kill or the pids limit is
// an outcome of the run, not a host error; /tmp has a size; processes left behind are killed and
// the cgroup removed; a limit no hierarchy can apply refuses the run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import {
  createRunCgroup,
  DEFAULT_LIMITS,
  holdRunCgroup,
  hostHierarchies,
  removeCgroupDir,
  startSandbox,
} from "../../src/sandbox/index.ts";
import { sweepStale } from "../../src/sandbox/cgroup.ts";
import { inSandbox } from "./fixture.ts";
import { runUnit } from "../../src/run/index.ts";
import { isHostError } from "../../src/errors.ts";

const ours = (dir: string, prefix: string) =>
  readdirSync(dir).filter((n) => n.startsWith(`${prefix}-${process.pid}-`));

test("memory: an allocation past the limit is an OOM kill, recorded as the run's outcome", async () => {
  const r = await inSandbox("echo RAN; perl -e '$x = \"a\" x (256*1024*1024); print length $x'", {
    limits: { memoryBytes: 32 << 20 },
  });
  assert.deepEqual(r.outcome, { status: "signaled", signal: "SIGKILL", limits: ["memory"] });
  assert.ok((r.limits?.oomKills ?? 0) >= 1, JSON.stringify(r.limits));
  const p = verifyAttestation(r.attestation).predicate;
  assert.deepEqual({ ...p.outcome }, r.outcome);
  assert.equal(p.level, "S4");
});

test("pids: forks past the limit are refused and counted", async () => {
  const r = await inSandbox(
    "echo RAN; i=0; while [ $i -lt 40 ]; do sleep 2 & i=$((i+1)); done 2>/dev/null; wait",
    {
      limits: { pids: 12 },
    },
  );
  assert.ok((r.limits?.pidsRefused ?? 0) >= 1, JSON.stringify(r.limits));
  // §7.2: the limit hit is part of the attested outcome, not only of the host's report.
  const p = verifyAttestation(r.attestation).predicate;
  const o = JSON.parse(JSON.stringify(p.outcome)) as { status: string; limits?: string[] };
  assert.equal(o.status, "exited");
  assert.deepEqual(o.limits, ["pids"]);
  assert.equal(p.level, "S4");
});

test("cpu: a busy loop gets at most its quota", async () => {
  const t0 = Date.now();
  const r = await inSandbox("echo RAN; timeout 1 sh -c 'while :; do :; done'; exit 0", {
    limits: { cpuMillis: 100 },
  });
  const wall = Date.now() - t0;
  const cpu = r.receipt.receipt.components.find((c) => c.domain === "cpu");
  assert.ok(cpu?.provenance === "estimated" && cpu.model.inputs, "cpu estimated from the cgroup");
  const cpuUs = Number((cpu.model.inputs as Record<string, string>).vcpu_us ?? NaN);
  // 0.1 CPU for about a second: well under half a CPU-second however the period falls.
  assert.ok(cpuUs < 0.5 * wall * 1000, `cpu_us ${cpuUs} over ${wall} ms`);
});

test("/tmp is private and bounded by its size", async () => {
  const r = await inSandbox(
    "echo RAN; dd if=/dev/zero of=/tmp/big bs=1024 count=4096 2>&1; df -k /tmp | tail -1",
    {
      tmpBytes: 1 << 20,
    },
  );
  assert.match(r.stdout.toString(), /No space left on device/);
});

test("the workspace size is bounded as the unit writes (the write past it fails) and recorded", async () => {
  const r = await inSandbox("echo RAN; dd if=/dev/zero of=big bs=1024 count=2048 2>/dev/null", {
    workspaceBytes: 1 << 20,
  });
  assert.equal(r.limits?.disk, true);
  assert.deepEqual(JSON.parse(JSON.stringify(verifyAttestation(r.attestation).predicate.outcome)), {
    status: "exited",
    exit_code: 1,
    limits: ["disk"],
  });
  const ok = await inSandbox("echo RAN; echo small > f", { workspaceBytes: 1 << 20 });
  assert.equal(ok.limits?.disk, false);
});

test("a background process left behind is killed and every cgroup removed (sandboxed and plain)", async () => {
  const h = hostHierarchies();
  const t0 = Date.now();
  const r = await inSandbox(
    "echo RAN; (sleep 100 >/dev/null 2>&1 &); setsid sleep 100 >/dev/null 2>&1 & echo left",
  );
  assert.deepEqual(r.outcome, { status: "exited", exit_code: 0 });
  assert.ok(Date.now() - t0 < 20_000);
  if (h.v2 !== null) assert.deepEqual(ours(h.v2, "sbx-run"), []);
  for (const m of Object.values(h.v1)) assert.deepEqual(ours(join(m.mount, m.self), "sbx-run"), []);
  // The plain runner: before, its meter cgroup could not be removed (EBUSY) and the record was lost.
  const none = addressOf({});
  const plain = await runUnit({
    argv: ["sh", "-c", "(sleep 100 >/dev/null 2>&1 &); echo left"],
    hostKey: testKey("host"),
    unitId: unitId(
      makeUnit({
        argv: ["sh", "-c", "(sleep 100 >/dev/null 2>&1 &); echo left"],
        manifest: none,
        level: "S0",
      }),
    ),
    grantsId: none,
    manifest: none,
    policy: none,
  });
  assert.deepEqual(plain.outcome, { status: "exited", exit_code: 0 });
  assert.equal(verifyAttestation(plain.attestation).predicate.level, "S0");
  if (h.v2 !== null) assert.deepEqual(ours(h.v2, "sbx-meter"), []);
});

test("a limit no hierarchy can apply refuses the run, and nothing is left behind", () => {
  const fake = mkdtempSync(join(tmpdir(), "sbx-fake-cgroup-"));
  try {
    const noControllers = { v2: fake, v2Self: "/", v1: {} };
    assert.throws(
      () => createRunCgroup("t1", DEFAULT_LIMITS, noControllers),
      (e) => isHostError(e, "LimitUnavailable"),
    );
    assert.deepEqual(readdirSync(fake), [], "the cgroup made before the refusal is removed");
    const ws = mkdtempSync(join(tmpdir(), "sbx-ws-"));
    assert.throws(
      () =>
        startSandbox(
          ["/bin/true"],
          { workspace: ws, hierarchies: { v2: null, v2Self: "/", v1: {} } },
          "ignore",
        ),
      (e) => isHostError(e, "CgroupUnavailable") || isHostError(e, "LimitUnavailable"),
    );
    rmSync(ws, { recursive: true, force: true });
  } finally {
    rmSync(fake, { recursive: true, force: true });
  }
});

test("limits out of range are a RangeError", () => {
  assert.throws(() => createRunCgroup("t2", { ...DEFAULT_LIMITS, memoryBytes: 10 }), RangeError);
  assert.throws(() => createRunCgroup("t2", { ...DEFAULT_LIMITS, pids: 0 }), RangeError);
});

test("empty run cgroups of a host process that died are swept; a live owner's are kept", () => {
  const fake = mkdtempSync(join(tmpdir(), "sbx-fake-cgroup-"));
  try {
    const stale = join(fake, "sbx-run-999999999-ab12");
    const live = join(fake, `sbx-run-${process.pid}-cd34`);
    mkdirSync(stale);
    mkdirSync(live);
    assert.throws(
      () => createRunCgroup("t3", DEFAULT_LIMITS, { v2: fake, v2Self: "/", v1: {} }),
      (e) => isHostError(e, "LimitUnavailable"),
    );
    assert.equal(existsSync(stale), false, "the dead owner's cgroup is removed");
    assert.equal(existsSync(live), true, "a live owner's cgroup is kept");
  } finally {
    rmSync(fake, { recursive: true, force: true });
  }
});

test("a held run cgroup outlives every stale sweep, empty and with its maker dead, until it is removed", () => {
  const fake = mkdtempSync(join(tmpdir(), "sbx-fake-cgroup-"));
  try {
    const held = join(fake, "sbx-run-999999999-ab12");
    const stale = join(fake, "sbx-run-999999999-cd34");
    mkdirSync(held);
    mkdirSync(stale);
    holdRunCgroup([held]);
    holdRunCgroup([held]); // holding twice is holding once
    sweepStale({ v2: fake, v2Self: "/", v1: {} });
    assert.equal(existsSync(stale), false, "the unheld cgroup is swept");
    assert.equal(existsSync(held), true, "the held one is kept");
    assert.equal(removeCgroupDir(held), true);
    assert.equal(existsSync(held), false, "removeCgroupDir takes the hold and the cgroup");
    assert.equal(removeCgroupDir(held), false, "a cgroup already gone is not removed twice");
  } finally {
    rmSync(fake, { recursive: true, force: true });
  }
});

test("on the host's own hierarchies, a held cgroup of a dead maker survives the sweep of the next run", () => {
  const dead = `sbx-run-999999999-${process.pid.toString(16)}aa`;
  const cg = createRunCgroup(dead, DEFAULT_LIMITS);
  let other: ReturnType<typeof createRunCgroup> | null = null;
  try {
    holdRunCgroup(cg.dirs);
    other = createRunCgroup(`t-sweep-${String(process.pid)}`, DEFAULT_LIMITS); // sweeps first
    for (const d of cg.dirs) assert.equal(existsSync(d), true, `${d} is kept`);
  } finally {
    for (const d of [...cg.dirs].reverse()) removeCgroupDir(d);
    for (const d of [...(other?.dirs ?? [])].reverse()) removeCgroupDir(d);
  }
  for (const d of cg.dirs) assert.equal(existsSync(d), false, `${d} is removed with its hold`);
});

test("a sandbox that cannot be set up is a host error, never an attested interval", async () => {
  await assert.rejects(
    () => inSandbox("echo RAN", { workspaceFolder: "/proc/sys/nowhere" }),
    (e) => isHostError(e, "SandboxFailed"),
  );
  await assert.rejects(
    () => inSandbox("echo RAN", { limits: { pids: 1 } }),
    (e) => isHostError(e, "SandboxFailed"),
  );
});
