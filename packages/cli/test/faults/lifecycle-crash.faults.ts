// Crash safety of the durable-run commands (§13.7): `sbx` is killed with SIGKILL at every write step
// of a suspension (the supervisor, from the run's creation through the suspended segment) and of a
// resumption by restore (from the first restored file through the resumed run's last executed
// segment), by the store's fault points (SBX_STORE_CRASH_AT=k). After each kill: the store reopens
// for writing, the record verifies (sbx verify --trust), an acknowledged suspension is in it, and the
// run can still be carried on: a parked run resumes (the agent finishes), an active one is suspended
// and resumed, and then closed. On a real disk directory: SBX_CRASH_DIR (default /var/tmp).
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { FileStore } from "@sbx/host/store";
import {
  fileIs,
  FINISH_AGENT,
  kinds,
  runIdOf,
  sbx,
  settled,
  startAgentRun,
  waitFor,
  workspaceWithAgent,
} from "../lifecycle-helpers.ts";

const DISK = process.env.SBX_CRASH_DIR ?? "/var/tmp";
const FROM = Number(process.env.SBX_LIFECYCLE_CRASH_FROM ?? "1");
// A window of steps (for a quick look); the default is every step until the operation completes.
const WINDOW = process.env.SBX_LIFECYCLE_CRASH_TO !== undefined;
const TO = Number(process.env.SBX_LIFECYCLE_CRASH_TO ?? "1000");
// Crash points in flight at once, each in a store of its own (SBX_LIFECYCLE_CRASH_LANES, default 3).
const LANES = Number(process.env.SBX_LIFECYCLE_CRASH_LANES ?? "3");

function recordFile(store: string): string | null {
  const f = readdirSync(join(store, "records")).find((n) => n.endsWith(".runrecord"));
  return f === undefined ? null : join(store, "records", f);
}

/** After a kill: the store reopens, the record verifies, and the run can be carried on and closed. */
async function carryOn(store: string, id: Digest, tag: string): Promise<void> {
  await settled(store);
  FileStore.open(store);
  const rec = recordFile(store);
  assert.ok(rec !== null, `${tag}: record`);
  const v = await sbx(["verify", rec, "--trust", join(store, "host-key.pub.pem")]);
  assert.equal(v.code, 0, `${tag}: verify ${v.out}${v.err}`);
  let k = await kinds(store, id);
  if (k.at(-1) !== "suspended") {
    const s = await sbx(["suspend", id, "--release", "--store", store]);
    assert.equal(s.code, 0, `${tag}: suspend after the kill: ${s.err}`);
    k = await kinds(store, id);
  }
  const r = await sbx(["resume", id, "--store", store, ...FINISH_AGENT]);
  assert.equal(r.code, 0, `${tag}: resume after the kill: ${r.err}`);
  const c = await sbx(["close", id, "--store", store]);
  assert.equal(c.code, 0, `${tag}: close: ${c.err}`);
  assert.equal((await kinds(store, id)).at(-1), "closed", tag);
}

/** Runs point(k) for k = FROM…TO, LANES at a time; true once a batch has a point that completed. */
async function sweep(point: (k: number) => Promise<boolean>): Promise<boolean> {
  for (let k = FROM; k <= TO; k += LANES) {
    const batch = Array.from({ length: Math.min(LANES, TO - k + 1) }, (_, i) => point(k + i));
    if ((await Promise.all(batch)).includes(true)) return true;
  }
  return false;
}

test("SIGKILL of the supervisor at every write step of run creation and suspension", async () => {
  const point = async (k: number): Promise<boolean> => {
    const dir = mkdtempSync(join(DISK, "sbx-lcrash-"));
    try {
      const store = join(dir, "store");
      FileStore.open(store, { create: true });
      const ws = workspaceWithAgent(join(dir, "ws"));
      const crash = { SBX_STORE_CRASH_AT: String(k) };
      const r = await sbx(
        ["run", "--detach", "--store", store, "--workspace", ws, "--", "/work/agent.sh"],
        crash,
      );
      if (r.code !== 0) {
        // Killed while creating the run: whatever record exists can be closed.
        await settled(store);
        FileStore.open(store);
        const rec = recordFile(store);
        if (rec !== null) {
          const id = `blake3:${rec.slice(-(64 + ".runrecord".length), -".runrecord".length)}`;
          assert.equal((await sbx(["close", id, "--store", store])).code, 0, `k=${String(k)}: close`);
        }
        return false;
      }
      const id = runIdOf(r.out);
      await waitFor(() => fileIs(join(ws, "state")) === "2", "the agent at step 2");
      const s = await sbx(["suspend", id, "--release", "--store", store]);
      if (s.code === 0)
        assert.equal((await kinds(store, id)).at(-1), "suspended", `k=${String(k)}: acknowledged`);
      await carryOn(store, id, `k=${String(k)}`);
      // §5.3: the workspace a killed supervisor's sandbox left on its image was written back.
      assert.ok(
        !readFileSync("/proc/self/mountinfo", "utf8").includes(` ${ws} `),
        `k=${String(k)}: ${ws} left mounted`,
      );
      return s.code === 0; // the suspension ran to its end: every step was covered
    } finally {
      // Should a check above fail with the image left mounted, it goes first, so the failure told is the check's.
      const ws = join(dir, "ws");
      if (readFileSync("/proc/self/mountinfo", "utf8").includes(` ${ws} `))
        spawnSync("/usr/bin/umount", ["-l", ws]);
      rmSync(dir, { recursive: true, force: true });
    }
  };
  if (await sweep(point)) return;
  if (!WINDOW) assert.fail("the suspension never completed");
});

test("SIGKILL of sbx resume at every write step of a resumption by restore", async () => {
  const base = mkdtempSync(join(DISK, "sbx-lcrash-"));
  try {
    const tpl = join(base, "store");
    const ws = workspaceWithAgent(join(base, "ws"));
    const id = await startAgentRun({ store: tpl, ws });
    assert.equal((await sbx(["suspend", id, "--release", "--store", tpl])).code, 0);
    await settled(tpl);
    // Crash points run LANES at a time, each on its own copy of the store; the sweep ends with the
    // batch in which a resumption ran to its end (every step before it was then a kill).
    const point = async (k: number): Promise<boolean> => {
      const store = join(base, `s${String(k)}`);
      cpSync(tpl, store, { recursive: true });
      const res = await sbx(["resume", id, "--store", store, ...FINISH_AGENT], {
        SBX_STORE_CRASH_AT: String(k),
      });
      if (res.code === 0) {
        assert.equal((await kinds(store, id)).at(-1), "executed", `k=${String(k)}: acknowledged`);
        return true; // the resumption ran to its end
      }
      await carryOn(store, id, `k=${String(k)}`);
      rmSync(store, { recursive: true, force: true });
      return false;
    };
    if (await sweep(point)) return;
    if (!WINDOW) assert.fail("the resumption never completed");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
