// A dead supervisor never loses an interval (sandbox-attest §13.10a item 8): the supervisor of a
// durable run is killed with SIGKILL at every named fault point of a run (the interval opened),
// of its suspension (receipt, attestation, executed segment, snapshot), of a resumption by restore
// (restored, resumed segment, the interval opened) and of a resumption in place of a frozen run
// (resumed segment, the interval opened before the thaw), and at no point at all (kill -9 while the
// agent runs, or while it is frozen); the command recovering an orphan is killed too (recovered
// interval stored, appended); its sandbox outlives it, `sbx runs` and `sbx show` say the supervisor is gone,
// and the next suspend, close or resume first attests the orphaned interval from the cgroup's
// counters (recovered: stopped SupervisorLost, estimated). After carrying each run on to its close,
// its record holds exactly one executed segment per interval that ran, and verifies. Then Ctrl-C
// twice 50 ms apart parks the run (the second is ignored, and said), and three times kills its
// processes with the interval still attested. On a real disk directory: SBX_CRASH_DIR.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { FileStore } from "@sbx/host/store";
import {
  fileIs,
  FINISH_AGENT,
  kinds,
  runIdOf,
  SBX,
  sbx,
  settled,
  startAgentRun,
  waitFor,
  workspaceWithAgent,
} from "../lifecycle-helpers.ts";

const DISK = process.env.SBX_CRASH_DIR ?? "/var/tmp";
const AGENT = ["--", "/work/agent.sh"] as const;

function idInStore(store: string): Digest {
  const f = readdirSync(join(store, "records")).find((n) => n.endsWith(".runrecord"));
  assert.ok(f !== undefined, "a record was made");
  return `blake3:${f.slice(0, -".runrecord".length)}`;
}

/** The executed segments' outcomes, in record order (each attestation opened from the store). */
async function outcomes(store: string, id: Digest): Promise<string[]> {
  const fs = FileStore.open(store, { readOnly: true });
  const bytes = await fs.readRecordBytes(id);
  const out: string[] = [];
  for (const s of decodeRecord(bytes!).record.segments)
    if (s.kind === "executed") {
      const a = verifyAttestation(await fs.getSigned(s.attestation));
      const o = a.predicate.outcome;
      const why = o.status === "spawn_failed" ? undefined : o.stopped;
      out.push(`${o.status}${why === undefined ? "" : ` stopped ${why}`} ${a.predicate.energy.provenance}`);
    }
  return out;
}

/** The supervisor is gone: `sbx runs` and `sbx show` say so. */
async function saysGone(store: string, id: Digest, tag: string): Promise<void> {
  await settled(store);
  const r = await sbx(["runs", "--store", store]);
  assert.match(r.out, /supervisor gone \(pid \d+\)/, `${tag}: runs ${r.out}`);
  const s = await sbx(["show", id, "--store", store]);
  assert.match(s.out, /supervisor gone \(pid \d+\)/, `${tag}: show ${s.out}`);
}

/** Carries the run on to its close; the record verifies and holds `expect` (its kinds, in order). */
async function closeAndCheck(store: string, id: Digest, ws: string, expect: string[], tag: string) {
  const r = await sbx(["resume", id, "--store", store, "--workspace", ws, ...FINISH_AGENT]);
  assert.equal(r.code, 0, `${tag}: resume: ${r.err}`);
  const c = await sbx(["close", id, "--store", store]);
  assert.equal(c.code, 0, `${tag}: close: ${c.err}`);
  assert.deepEqual(await kinds(store, id), expect, `${tag}: each interval attested exactly once`);
  const v = await sbx(["verify", id, "--store", store, "--trust", join(store, "host-key.pub.pem")]);
  assert.equal(v.code, 0, `${tag}: verify ${v.out}${v.err}`);
}

/** Suspends (and releases) a run whose supervisor died; says whether the interval was recovered. */
async function suspendOrphan(store: string, id: Digest, tag: string): Promise<boolean> {
  const s = await sbx(["suspend", id, "--release", "--store", store]);
  assert.equal(s.code, 0, `${tag}: suspend after the kill: ${s.err}`);
  assert.match(s.err, /supervisor \(pid \d+\) is gone/, `${tag}: ${s.err}`);
  return /was recovered from the cgroup's counters/.test(s.err);
}

// Points of `sbx run` and of its supervisor's suspension, with whether the interval is still
// unrecorded when the supervisor dies there (then the next command recovers it).
const RUN_POINTS: [string, boolean][] = [
  ["durable:interval-opened", true],
  ["durable:receipt-stored", true],
  ["durable:attestation-stored", true],
  ["durable:segment-appended", false],
  ["durable:snapshot-stored", false],
  ["kill -9 while running", true],
];

for (const [point, unrecorded] of RUN_POINTS)
  test(`SIGKILL of the supervisor at ${point}: the interval is attested exactly once`, async () => {
    const dir = mkdtempSync(join(DISK, "sbx-supkill-"));
    try {
      const store = join(dir, "store");
      FileStore.open(store, { create: true });
      const ws = workspaceWithAgent(join(dir, "ws"));
      const named = point.startsWith("durable:");
      const r = await sbx(
        ["run", "--detach", "--store", store, "--workspace", ws, ...AGENT],
        named ? { SBX_STORE_CRASH_ON: point } : {},
      );
      const id = r.code === 0 ? runIdOf(r.out) : idInStore(store);
      // The sandbox outlives its supervisor (the agent goes on to step 2, where it waits). Killed as
      // the interval opens, the supervisor may die before the agent's first lines: the reader of
      // their pipe is gone, so the agent's next `echo` ends it (SIGPIPE, as for any pipe whose
      // reader died) wherever it was; its cgroup is held, and its interval recovered all the same.
      if (point !== "durable:interval-opened")
        await waitFor(() => fileIs(join(ws, "state")) === "2", "the agent at step 2");
      if (point === "kill -9 while running") {
        const pid = Number(/background by pid (\d+)/.exec(r.err)?.[1]);
        process.kill(pid, "SIGKILL");
      } else if (point !== "durable:interval-opened") {
        const s = await sbx(["suspend", id, "--release", "--store", store]);
        assert.notEqual(s.code, 0, `${point}: the supervisor died while suspending`);
      }
      await saysGone(store, id, point);
      assert.equal(await suspendOrphan(store, id, point), unrecorded, point);
      assert.deepEqual(await kinds(store, id), ["executed", "suspended"], point);
      const first = (await outcomes(store, id))[0];
      if (unrecorded) assert.equal(first, "signaled stopped SupervisorLost estimated", point);
      else assert.doesNotMatch(first ?? "", /SupervisorLost/, point);
      const expect = ["executed", "suspended", "resumed", "executed", "closed"];
      await closeAndCheck(store, id, join(dir, "ws2"), expect, point);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

// Points of a resumption by restore (`sbx resume`, which becomes the resumed run's supervisor).
const RESUME_POINTS = ["durable:restored", "durable:resumed-appended", "durable:interval-opened"];

for (const point of RESUME_POINTS)
  test(`SIGKILL of sbx resume at ${point}: every interval is attested exactly once`, async () => {
    const dir = mkdtempSync(join(DISK, "sbx-supkill-"));
    try {
      const store = join(dir, "store");
      const id = await startAgentRun({ store, ws: workspaceWithAgent(join(dir, "ws")) });
      assert.equal((await sbx(["suspend", id, "--release", "--store", store])).code, 0);
      await settled(store);
      const ws2 = join(dir, "ws2");
      const r = await sbx(["resume", id, "--detach", "--store", store, "--workspace", ws2, ...AGENT], {
        SBX_STORE_CRASH_ON: point,
      });
      assert.notEqual(r.code, 0, `${point}: the resuming supervisor died`);
      await settled(store);
      const ws3 = join(dir, "ws3");
      if (point === "durable:restored") {
        // Nothing was appended: the run is still parked, and resumes.
        await closeAndCheck(
          store,
          id,
          ws3,
          ["executed", "suspended", "resumed", "executed", "closed"],
          point,
        );
        return;
      }
      if (point === "durable:interval-opened") {
        // The resumed agent goes on (from step 3 it waits for nothing) while its supervisor is gone.
        await saysGone(store, id, point);
        assert.equal(await suspendOrphan(store, id, point), true, point);
      } else {
        const s = await sbx(["suspend", id, "--release", "--store", store]);
        assert.equal(s.code, 0, `${point}: suspend: ${s.err}`);
      }
      const ran = point === "durable:interval-opened" ? ["executed"] : [];
      const expect = [
        "executed",
        "suspended",
        "resumed",
        ...ran,
        "suspended",
        "resumed",
        "executed",
        "closed",
      ];
      await closeAndCheck(store, id, ws3, expect, point);
      if (ran.length > 0)
        assert.equal((await outcomes(store, id))[1], "signaled stopped SupervisorLost estimated", point);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

// Points of a resumption in place (`sbx resume` of a frozen run, answered by its own supervisor):
// the resumed segment appended (nothing ran since), and the interval opened before the thaw (its
// second, a frozen one). The same `sbx resume`, finding the supervisor gone when it asks again,
// recovers what it left (attesting the interval only when unrecorded), then refuses: the run is
// active (PhaseViolation); it is suspended from its workspace, resumed and closed.
const THAW_POINTS: [string, boolean][] = [
  ["durable:resumed-appended", false],
  ["durable:interval-opened#2", true],
];

for (const [point, unrecorded] of THAW_POINTS)
  test(`SIGKILL of the supervisor thawing a frozen run at ${point}: each interval attested once`, async () => {
    const dir = mkdtempSync(join(DISK, "sbx-supkill-"));
    try {
      const store = join(dir, "store");
      FileStore.open(store, { create: true });
      const ws = workspaceWithAgent(join(dir, "ws"));
      const id = await startAgentRun({ store, ws, env: { SBX_STORE_CRASH_ON: point } });
      assert.equal((await sbx(["suspend", id, "--store", store])).code, 0, `${point}: frozen`);
      const r = await sbx(["resume", id, "--store", store]);
      assert.equal(r.code, 1, `${point}: the supervisor died while resuming: ${r.out}${r.err}`);
      assert.match(r.err, /supervisor \(pid \d+\) is gone/, `${point}: ${r.err}`);
      assert.equal(/was recovered from the cgroup's counters/.test(r.err), unrecorded, `${point}: ${r.err}`);
      assert.match(r.err, /PhaseViolation/, `${point}: ${r.err}`);
      const s = await sbx(["suspend", id, "--release", "--store", store]);
      assert.equal(s.code, 0, `${point}: ${s.err}`);
      assert.doesNotMatch(s.err, /supervisor/, `${point}: recovered once: ${s.err}`);
      const ran = unrecorded ? ["executed"] : [];
      const parked = ["executed", "suspended", "resumed", ...ran, "suspended"];
      assert.deepEqual(await kinds(store, id), parked, point);
      if (unrecorded)
        assert.equal((await outcomes(store, id))[1], "signaled stopped SupervisorLost estimated", point);
      const expect = [...parked, "resumed", "executed", "closed"];
      await closeAndCheck(store, id, join(dir, "ws2"), expect, point);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

/** A run whose supervisor was killed with SIGKILL while the agent sits at step 2. */
async function orphanedRun(dir: string): Promise<{ store: string; id: Digest }> {
  const store = join(dir, "store");
  FileStore.open(store, { create: true });
  const ws = workspaceWithAgent(join(dir, "ws"));
  const r = await sbx(["run", "--detach", "--store", store, "--workspace", ws, ...AGENT]);
  assert.equal(r.code, 0, r.err);
  const id = runIdOf(r.out);
  await waitFor(() => fileIs(join(ws, "state")) === "2", "the agent at step 2");
  process.kill(Number(/background by pid (\d+)/.exec(r.err)?.[1]), "SIGKILL");
  await settled(store);
  return { store, id };
}

// Points of the recovery itself (the command that attests the orphaned interval is killed too):
// its receipt and attestation stored, and its executed segment appended, the interval file kept.
const RECOVERY_POINTS: [string, boolean][] = [
  ["durable:recovered-stored", true],
  ["durable:recovered-appended", false],
];

for (const [point, again] of RECOVERY_POINTS)
  test(`SIGKILL of the recovering sbx suspend at ${point}: the interval is attested once`, async () => {
    const dir = mkdtempSync(join(DISK, "sbx-supkill-"));
    try {
      const { store, id } = await orphanedRun(dir);
      const s = await sbx(["suspend", id, "--release", "--store", store], { SBX_STORE_CRASH_ON: point });
      assert.notEqual(s.code, 0, `${point}: the recovering command died`);
      await settled(store);
      assert.deepEqual(await kinds(store, id), again ? [] : ["executed"], point);
      await saysGone(store, id, point);
      assert.equal(await suspendOrphan(store, id, point), again, point);
      assert.deepEqual(await kinds(store, id), ["executed", "suspended"], point);
      assert.deepEqual(await outcomes(store, id), ["signaled stopped SupervisorLost estimated"], point);
      const expect = ["executed", "suspended", "resumed", "executed", "closed"];
      await closeAndCheck(store, id, join(dir, "ws2"), expect, point);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

test("sbx close of a run whose supervisor was killed: the interval is recovered, then closed", async () => {
  const dir = mkdtempSync(join(DISK, "sbx-supkill-"));
  try {
    const { store, id } = await orphanedRun(dir);
    const c = await sbx(["close", id, "--store", store]);
    assert.equal(c.code, 0, c.err);
    assert.match(c.err, /was recovered from the cgroup's counters/, c.err);
    assert.deepEqual(await kinds(store, id), ["executed", "closed"]);
    assert.deepEqual(await outcomes(store, id), ["signaled stopped SupervisorLost estimated"]);
    const v = await sbx(["verify", id, "--store", store, "--trust", join(store, "host-key.pub.pem")]);
    assert.equal(v.code, 0, `verify ${v.out}${v.err}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sbx resume of a run whose supervisor was killed while active: recovered first, then PhaseViolation", async () => {
  const dir = mkdtempSync(join(DISK, "sbx-supkill-"));
  try {
    const { store, id } = await orphanedRun(dir);
    const r = await sbx(["resume", id, "--store", store, "--workspace", join(dir, "ws1"), ...AGENT]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /was recovered from the cgroup's counters/, r.err);
    assert.match(r.err, /PhaseViolation/, r.err);
    assert.deepEqual(await kinds(store, id), ["executed"]);
    // Recovered once: the suspension that follows finds no supervisor gone.
    const s = await sbx(["suspend", id, "--release", "--store", store]);
    assert.equal(s.code, 0, s.err);
    assert.doesNotMatch(s.err, /supervisor/, s.err);
    const expect = ["executed", "suspended", "resumed", "executed", "closed"];
    await closeAndCheck(store, id, join(dir, "ws2"), expect, "resume");
    assert.deepEqual((await outcomes(store, id))[0], "signaled stopped SupervisorLost estimated");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("SIGKILL of the supervisor of a frozen run: resume ends what it left and restores, nothing attested again", async () => {
  const dir = mkdtempSync(join(DISK, "sbx-supkill-"));
  const ws = workspaceWithAgent(join(dir, "ws"));
  try {
    const store = join(dir, "store");
    const r = await sbx(["run", "--detach", "--store", store, "--workspace", ws, ...AGENT]);
    assert.equal(r.code, 0, r.err);
    const id = runIdOf(r.out);
    await waitFor(() => fileIs(join(ws, "state")) === "2", "the agent at step 2");
    assert.equal((await sbx(["suspend", id, "--store", store])).code, 0, "frozen");
    process.kill(Number(/background by pid (\d+)/.exec(r.err)?.[1]), "SIGKILL");
    await saysGone(store, id, "frozen");
    const expect = ["executed", "suspended", "resumed", "executed", "closed"];
    await closeAndCheck(store, id, join(dir, "ws2"), expect, "frozen");
    const o = await outcomes(store, id);
    assert.ok(
      o.every((x) => !x.includes("SupervisorLost")),
      o.join(),
    );
    // What the dead supervisor left on its bounded image was written back, nothing left mounted.
    assert.equal(statSync(ws).dev, statSync(dir).dev, "the old workspace is not left mounted on its image");
    assert.equal(fileIs(join(ws, "state")), "2", "the old workspace holds what the unit wrote");
  } finally {
    // Should the check above fail, the image left mounted goes first, so the failure is what is told.
    if (statSync(ws).dev !== statSync(dir).dev) spawnSync("/usr/bin/umount", ["-l", ws]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The lines by which the supervisor acknowledges a Ctrl-C (parking, ignored, killing). */
const ACKED = /parking the run \(|this Ctrl-C is ignored|killing the run's processes/g;

/**
 * Whether `sig` is pending for process `pid` (sent, not yet delivered): the kernel keeps one pending
 * SIGINT however many are sent, so a second sent before the first is delivered is lost.
 */
function pending(pid: number, sig: number): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${String(pid)}/status`, "utf8");
  } catch {
    return false; // gone
  }
  const bit = 1n << BigInt(sig - 1);
  return ["SigPnd", "ShdPnd"].some((k) => {
    const hex = new RegExp(`^${k}:\\s*([0-9a-f]+)$`, "m").exec(status)?.[1];
    return hex !== undefined && (BigInt(`0x${hex}`) & bit) !== 0n;
  });
}

/**
 * Starts `sbx run` in the foreground and, once the agent is at step 2, sends SIGINT `n` times, each
 * once the one before was delivered (no longer pending to the kernel) and `gapMs` after it, and,
 * when `acked`, once the one before was acknowledged; `bulkBytes` of workspace make the parking's
 * snapshot take a while.
 */
async function interrupted(
  n: number,
  gapMs: number,
  bulkBytes = 0,
  acked = true,
): Promise<{ code: number | null; err: string; store: string; dir: string }> {
  const dir = mkdtempSync(join(DISK, "sbx-supkill-"));
  const store = join(dir, "store");
  const ws = workspaceWithAgent(join(dir, "ws"));
  if (bulkBytes > 0) writeFileSync(join(ws, "bulk"), randomBytes(bulkBytes));
  const p = spawn(process.execPath, [SBX, "run", "--store", store, "--workspace", ws, ...AGENT]);
  let err = "";
  p.stderr.on("data", (b: Buffer) => (err += b.toString()));
  p.stdout.resume();
  const ended = new Promise<number | null>((r) => p.on("close", (c) => r(c)));
  await waitFor(() => fileIs(join(ws, "state")) === "2", "the agent at step 2");
  for (let i = 0; i < n; i++) {
    p.kill("SIGINT");
    await waitFor(() => !pending(p.pid ?? 0, 2), `Ctrl-C ${String(i + 1)} delivered`);
    if (acked)
      await waitFor(
        () => (err.match(ACKED)?.length ?? 0) > i || p.exitCode !== null,
        `Ctrl-C ${String(i + 1)} acknowledged`,
      );
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return { code: await ended, err, store, dir };
}

test("Ctrl-C twice 50 ms apart: the run is parked, the second is ignored and said", async () => {
  // 64 MiB of workspace: the parking's snapshot outlasts the 50 ms, so the second Ctrl-C meets it.
  const r = await interrupted(2, 50, 64 << 20);
  try {
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /this Ctrl-C is ignored/);
    const id = idInStore(r.store);
    assert.deepEqual(await kinds(r.store, id), ["executed", "suspended"]);
    const o = await outcomes(r.store, id);
    assert.ok(o.length === 1 && o[0]?.startsWith("signaled ") && !o[0].includes("SupervisorLost"), o.join());
    await closeAndCheck(
      r.store,
      id,
      join(r.dir, "ws2"),
      ["executed", "suspended", "resumed", "executed", "closed"],
      "2×",
    );
  } finally {
    rmSync(r.dir, { recursive: true, force: true });
  }
});

test("Ctrl-C three times within 2 s: the run's processes are killed, the interval still attested once", async () => {
  // Each sent once the one before was delivered, 10 ms apart, without waiting for its answer: the
  // parking's snapshot and write-back hold the event loop, so a signal is acted on only between
  // their steps.
  const r = await interrupted(3, 10, 64 << 20, false);
  try {
    assert.match(r.err, /killing the run's processes/);
    const id = idInStore(r.store);
    await settled(r.store);
    const k = await kinds(r.store, id);
    assert.equal(k.filter((x) => x === "executed").length, 1, `one executed segment: ${k.join(" ")}`);
    assert.equal(k[0], "executed", k.join(" "));
    // Attested by the parking under way (signed, verifying), not recovered as lost.
    const o = await outcomes(r.store, id);
    assert.ok(o[0]?.startsWith("signaled ") && !o[0].includes("SupervisorLost"), o.join());
    const v = await sbx(["verify", id, "--store", r.store, "--trust", join(r.store, "host-key.pub.pem")]);
    assert.equal(v.code, 0, `verify ${v.out}${v.err}`);
  } finally {
    rmSync(r.dir, { recursive: true, force: true });
  }
});
