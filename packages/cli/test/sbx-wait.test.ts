// `sbx wait RUN` and `sbx ps` (issue 29, sandbox-attest §13.10a item 9): a wait on a detached run
// ends with the outcome its last interval's attestation states (`exited 3`; `--exit-code` passes the
// 3 on), with `parked` when another command suspends the run, with `supervisor gone (pid N)` when its
// supervisor is killed, and with WaitTimeout (exit 1) at --timeout; an unknown run is refused as by
// `sbx show`. `sbx ps` lists a live detached run with its supervisor's pid and drops it once closed.
// Every run started here is closed, its holder gone, before the test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseDigest, toHex, type Digest } from "@sbx/wire";
import { lockHolder, startTicks } from "@sbx/host/durable";
import {
  kinds,
  runIdOf,
  sbx,
  settled,
  startAgentRun,
  waitFor,
  waitKinds,
  workspaceWithAgent,
} from "./lifecycle-helpers.ts";

/**
 * inScratch runs `body` in a fresh folder whose store is `store`; every run `body` starts is named
 * to `started`, so that, should an assertion fail half-way, it is still closed (its supervisor and
 * sandbox ended) before the folder goes; a body that passes closes its own.
 */
async function inScratch(
  body: (dir: string, store: string, started: (id: Digest) => Digest) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join("/var/tmp", "sbx-wait-"));
  const store = join(dir, "store");
  const runs: Digest[] = [];
  try {
    await body(dir, store, (id) => {
      runs.push(id);
      return id;
    });
  } catch (e) {
    for (const id of runs) await sbx(["close", id, "--store", store]);
    if (runs.length > 0) await settled(store);
    throw e;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The row `sbx ps --json` gives for a run. */
interface PsRow {
  id: string;
  pid: number;
  phase: string;
  since_ms: number;
  since: string;
  command: string[] | null;
  entry: string | null;
  energy_uj: string | null;
  energy_complete: boolean;
  valid: boolean;
}

async function psJson(store: string): Promise<PsRow[]> {
  const r = await sbx(["ps", "--store", store, "--json"]);
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as PsRow[];
}

/** close closes the run and waits until nothing holds it and its supervisor (if any) has exited. */
async function close(store: string, id: Digest): Promise<void> {
  const sup = (await psJson(store)).find((r) => r.id === id)?.pid ?? null;
  const c = await sbx(["close", id, "--store", store]);
  assert.equal(c.code, 0, c.err);
  await settled(store);
  if (sup !== null) await waitFor(() => startTicks(sup) === null, "the supervisor's exit");
}

test("wait on a run whose command exits 3: exited 3, exit 0; --exit-code exits 3; closed after: closed failed", async () => {
  await inScratch(async (dir, store, started) => {
    const ws = workspaceWithAgent(join(dir, "ws"));
    const r = await sbx([
      "run",
      "--detach",
      "--store",
      store,
      "--workspace",
      ws,
      "--",
      "/bin/sh",
      "-c",
      "sleep 0.3; exit 3",
    ]);
    assert.equal(r.code, 0, r.err);
    const id = started(runIdOf(r.out));
    // Waited for while it runs (the prefix sbx runs prints), and again once it has ended.
    const w = await sbx(["wait", id.slice(0, 24), "--store", store]);
    assert.equal(w.code, 0, w.err);
    assert.equal(w.out, "exited 3\n");
    assert.deepEqual(await kinds(store, id), ["executed"]);
    const e = await sbx(["wait", id, "--store", store, "--exit-code"]);
    assert.equal(e.code, 3, e.err);
    assert.equal(e.out, "exited 3\n");
    const j = await sbx(["wait", id, "--store", store, "--json"]);
    assert.equal(j.code, 0, j.err);
    const got = JSON.parse(j.out) as Record<string, unknown>;
    assert.equal(got.id, id);
    assert.equal(got.state, "exited");
    assert.equal(got.exit_code, 3);
    assert.equal(got.signal, null);
    assert.equal(got.supervisor_pid, null);
    await close(store, id);
    const c = await sbx(["wait", id, "--store", store, "--exit-code"]);
    assert.equal(c.out, "closed failed\n");
    assert.equal(c.code, 3, "closed after exiting by itself: the command's own status");
  });
});

test("wait on an agent run that another command suspends --release: parked; with --exit-code, 1", async () => {
  await inScratch(async (dir, store, started) => {
    const ws = workspaceWithAgent(join(dir, "ws"));
    const id = started(await startAgentRun({ store, ws }));
    let ended = false;
    const waiting = sbx(["wait", id, "--store", store]).finally(() => (ended = true));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(ended, false, "the wait returned while the agent was still at step 2");
    const s = await sbx(["suspend", id, "--release", "--store", store]);
    assert.equal(s.code, 0, s.err);
    const w = await waiting;
    assert.equal(w.code, 0, w.err);
    assert.equal(w.out, "parked\n");
    const e = await sbx(["wait", id, "--store", store, "--exit-code"]);
    assert.equal(e.code, 1);
    assert.equal(e.out, "parked\n");
    await close(store, id);
  });
});

test("wait --timeout 200 on a waiting agent: WaitTimeout, exit 1, promptly; the run goes on undisturbed", async () => {
  await inScratch(async (dir, store, started) => {
    const ws = workspaceWithAgent(join(dir, "ws"));
    const id = started(await startAgentRun({ store, ws }));
    const t0 = Date.now();
    const w = await sbx(["wait", id, "--store", store, "--timeout", "200"]);
    const took = Date.now() - t0;
    assert.equal(w.code, 1, w.err);
    assert.match(w.err, /^sbx wait: WaitTimeout: run blake3:[0-9a-f]{64} was still going after 200 ms/);
    assert.equal(w.out, "");
    assert.ok(took < 6000, `the wait took ${String(took)} ms`);
    // Nothing was taken: the supervisor still answers, and the record holds no segment yet.
    assert.deepEqual(await kinds(store, id), []);
    const [row] = await psJson(store);
    assert.equal(row?.id, id);
    for (const bad of ["-1", "2s", "", "1.5"]) {
      const u = await sbx(["wait", id, "--store", store, `--timeout=${bad}`]);
      assert.equal(u.code, 2, `--timeout ${bad}: ${u.err}`);
      assert.match(u.err, /--timeout must be a whole number of milliseconds/);
    }
    await close(store, id);
  });
});

test("wait on an unknown run is refused as sbx show refuses it; usage errors exit 2", async () => {
  await inScratch(async (_dir, store) => {
    const init = await sbx(["store", "init", "--store", store]);
    assert.equal(init.code, 0, init.err);
    const shown = await sbx(["show", "blake3:ffff0000", "--store", store]);
    const waited = await sbx(["wait", "blake3:ffff0000", "--store", store]);
    assert.equal(shown.code, 2, shown.err);
    assert.equal(waited.code, shown.code);
    assert.equal(waited.err, shown.err.replace("sbx show:", "sbx wait:"));
    assert.match(waited.err, /RunNotFound/);
    const none = await sbx(["wait", "--store", store]);
    assert.equal(none.code, 2);
    assert.match(none.err, /exactly one RUN is required/);
    const extra = await sbx(["ps", "x", "--store", store]);
    assert.equal(extra.code, 2);
    for (const cmd of ["wait", "ps"]) {
      const h = await sbx([cmd, "--help"]);
      assert.equal(h.code, 0);
      assert.match(h.out, new RegExp(`^usage: sbx ${cmd} `));
    }
  });
});

test("sbx ps lists a live detached run with its supervisor's pid, and not once closed; a killed one: supervisor gone", async () => {
  await inScratch(async (dir, store, started) => {
    const empty = await sbx(["ps", "--store", store]);
    assert.equal(empty.code, 2, "no store yet: unusable, as for sbx runs");
    const ws = workspaceWithAgent(join(dir, "ws"));
    const id = started(await startAgentRun({ store, ws }));
    const rows = await psJson(store);
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.equal(row.id, id);
    assert.equal(row.phase, "active");
    assert.deepEqual(row.command, ["/work/agent.sh"]);
    assert.equal(row.entry, null);
    assert.equal(row.valid, true);
    assert.equal(typeof row.energy_uj, "string");
    assert.ok(Number.isSafeInteger(row.since_ms) && row.since_ms <= Date.now());
    assert.equal(row.since, new Date(row.since_ms).toISOString());
    // The pid is the supervisor's: alive, and the one holding the run's lock.
    const lock = join(store, "live", `${toHex(parseDigest(id))}.lock`);
    assert.equal(lockHolder(lock), row.pid);
    process.kill(row.pid, 0);
    const text = await sbx(["ps", "--store", store]);
    assert.equal(text.code, 0, text.err);
    const lines = text.out.trimEnd().split("\n");
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, /^run +pid phase +since +energy \(µJ\) +command$/);
    assert.match(
      lines[1]!,
      new RegExp(`^${id.slice(0, 24)} +${String(row.pid)} active  .* /work/agent\\.sh$`),
    );
    await close(store, id);
    assert.deepEqual(await psJson(store), []);
    const after = await sbx(["ps", "--store", store]);
    assert.equal(after.out.trimEnd().split("\n").length, 1, after.out);

    // A second run whose supervisor is killed: the wait says so, ps no longer lists it.
    const ws2 = workspaceWithAgent(join(dir, "ws2"));
    const id2 = started(await startAgentRun({ store, ws: ws2 }));
    const [live] = await psJson(store);
    assert.equal(live?.id, id2);
    process.kill(live.pid, "SIGKILL");
    const w = await sbx(["wait", id2, "--store", store, "--exit-code"]);
    assert.equal(w.code, 1, w.err);
    assert.equal(w.out, `supervisor gone (pid ${String(live.pid)}): its interval is not recorded yet\n`);
    assert.deepEqual(await psJson(store), []);
    // close recovers the interval and ends what the supervisor left running.
    await close(store, id2);
    await waitKinds(store, id2, 2);
  });
});
