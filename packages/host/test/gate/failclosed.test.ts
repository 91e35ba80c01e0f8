// §5.5 battery, fail closed: when the helper dies or stalls, when the warden or the Node side
// dies, and when Node never answers, nothing in the sandbox runs unguarded.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { startGate, type GateSession } from "@sbx/host/gate";
import { withFixture, pidsInNamespace, runSh, sleep, type Fixture } from "./fixture.ts";

let f: Fixture;
let policy: ExecPolicy;
const LOOP = "while :; do ./denied m 2>/dev/null; sleep 0.02; done";

withFixture((x) => {
  f = x;
  policy = makePolicy("denylist", [], [f.deniedDigest]);
});

async function untilEmpty(ns: string, ms: number): Promise<number[]> {
  const end = Date.now() + ms;
  let left = pidsInNamespace(ns);
  while (left.length > 0 && Date.now() < end) {
    await sleep(50);
    left = pidsInNamespace(ns);
  }
  return left;
}

async function started(stallMs = 2000): Promise<{ s: GateSession; ns: string }> {
  const s = await startGate({
    policy,
    command: ["/bin/sh", "-c", LOOP],
    workspace: f.ws,
    loaders: f.loaders,
    env: f.env,
    stallMs,
  });
  const ns = readlinkSync(`/proc/${s.sandboxPid}/ns/pid`);
  while (!s.decisions.some((d) => d.digest === f.deniedDigest)) await sleep(20);
  return { s, ns };
}

function wardenOf(helper: number): number {
  const kids = readFileSync(`/proc/${helper}/task/${helper}/children`, "utf8")
    .trim()
    .split(/\s+/)
    .map(Number);
  return kids.find((k) => readlinkSync(`/proc/${k}/ns/pid`) === readlinkSync(`/proc/${helper}/ns/pid`)) ?? -1;
}

describe("fail closed", () => {
  test("killing the helper kills every sandbox process", { timeout: 30_000 }, async () => {
    const { s, ns } = await started();
    assert.ok(pidsInNamespace(ns).length >= 1);
    process.kill(s.helperPid, "SIGKILL");
    assert.deepEqual(await untilEmpty(ns, 5000), [], "sandbox processes outlived the helper");
    const r = await s.done;
    assert.equal(r.helperCode, null, "the helper was killed");
    assert.ok(!existsSync(join(f.ws, "m")), "the denied binary never ran");
    assert.ok(r.decisions.every((d) => d.digest !== f.deniedDigest || !d.allowed));
  });

  test(
    "a stalled helper (SIGSTOP) is killed by the warden with its sandbox",
    { timeout: 30_000 },
    async () => {
      const { s, ns } = await started(800);
      process.kill(s.helperPid, "SIGSTOP");
      assert.deepEqual(await untilEmpty(ns, 6000), [], "sandbox processes outlived the stall");
      const r = await s.done;
      assert.equal(r.helperCode, null);
      assert.ok(!existsSync(join(f.ws, "m")));
    },
  );

  test("killing the warden stops the sandbox", { timeout: 30_000 }, async () => {
    const { s, ns } = await started();
    const w = wardenOf(s.helperPid);
    assert.ok(w > 0, "warden found");
    process.kill(w, "SIGKILL");
    assert.deepEqual(await untilEmpty(ns, 5000), []);
    assert.equal((await s.done).helperCode, 76);
  });

  test("when the Node side dies, the helper stops the sandbox", { timeout: 30_000 }, async () => {
    const driver = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "orphan-driver.ts"), f.ws],
      { stdio: ["ignore", "pipe", "inherit"], env: f.env },
    );
    const line = await new Promise<string>((resolve) =>
      createInterface({ input: driver.stdout }).once("line", resolve),
    );
    const [, spid, , hpid] = line.split(" ").map(Number) as [number, number, number, number];
    const ns = readlinkSync(`/proc/${spid}/ns/pid`);
    driver.kill("SIGKILL");
    assert.deepEqual(await untilEmpty(ns, 5000), []);
    const end = Date.now() + 5000;
    while (existsSync(`/proc/${hpid}/exe`) && Date.now() < end) await sleep(50);
    assert.ok(!f.helpers().includes(hpid), "the helper exited");
  });

  test("no answer from Node within the timeout is DENY", { timeout: 30_000 }, async () => {
    const t = Date.now();
    const r = await runSh(f, policy, "echo never", { timeoutMs: 300, withholdAnswers: true });
    assert.equal(r.code, 126, "the sandbox's first exec was refused");
    assert.ok(!r.stdout.includes("never"));
    const d = r.decisions[0];
    assert.ok(
      d && !d.allowed && d.source === "timeout" && d.rule === "timeout" && d.route === "direct",
      JSON.stringify(r.decisions),
    );
    assert.ok(Date.now() - t < 10_000);
  });
});
