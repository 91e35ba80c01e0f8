// Durable runs from the command line (§13): sbx run --detach/--store, suspend (frozen and
// --release), resume (thaw, and restore into a fresh sandbox), close, and the refusals: a tampered
// snapshot (SnapshotMismatch), a host that does not satisfy the manifest (EnvironmentMismatch), a
// second resume of the same parked run (PhaseViolation and friends, nothing appended twice), close
// while parked; sbx verify --trust on the result, and a flipped byte refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { digestBytes, utf8 } from "@sbx/wire";
import { FileStore } from "@sbx/host/store";
import {
  fileIs,
  FINISH_AGENT,
  kinds,
  runIdOf,
  sbx,
  startAgentRun,
  waitFor,
  workspaceWithAgent,
} from "./lifecycle-helpers.ts";

/** isCodeName: is `s` shaped as the specs name a failure (an upper-case letter, then letters and digits)? */
function isCodeName(s: string): boolean {
  return /^[A-Z][A-Za-z0-9]+$/.test(s);
}

function scratch(): string {
  return mkdtempSync(join("/var/tmp", "sbx-lifecycle-"));
}

/** startAgent starts the agent as a detached durable run and waits until it sits at step 2. */
async function startAgent(dir: string, extra: string[] = []) {
  const store = join(dir, "store");
  const ws = workspaceWithAgent(join(dir, "ws"));
  const id = await startAgentRun({ store, ws, args: extra });
  return { store, ws, id };
}

test("the whole lifecycle: run, suspend frozen, resume (thaw), a second resume refused, finish, close, verify", async () => {
  const dir = scratch();
  try {
    const { store, ws, id } = await startAgent(dir);
    const s = await sbx(["suspend", id, "--store", store]);
    assert.equal(s.code, 0, s.err);
    assert.match(s.out, /released false/);
    assert.deepEqual(await kinds(store, id), ["executed", "suspended"]);
    const r1 = await sbx(["resume", id, "--store", store]);
    assert.equal(r1.code, 0, r1.err);
    assert.match(r1.out, /thawed true/);
    const r2 = await sbx(["resume", id, "--store", store]);
    assert.equal(r2.code, 1);
    assert.match(r2.err, /PhaseViolation/);
    assert.deepEqual(await kinds(store, id), ["executed", "suspended", "resumed"]);
    writeFileSync(join(ws, "go"), "");
    // The supervisor records the last interval when the agent exits: wait for it in the record.
    await waitFor(() => fileIs(join(ws, "result")) === "5", "the agent's result");
    const want = ["executed", "suspended", "resumed", "executed"];
    for (;;) {
      if ((await kinds(store, id)).length === want.length) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const c = await sbx(["close", id, "--store", store]);
    assert.equal(c.code, 0, c.err);
    assert.match(c.out, /outcome completed/);
    assert.deepEqual(await kinds(store, id), [...want, "closed"]);
    const record = join(
      store,
      "records",
      readdirSync(join(store, "records")).find((f) => f.endsWith(".runrecord")) ?? "",
    );
    const v = await sbx(["verify", id, "--store", store, "--trust", join(store, "host-key.pub.pem")]);
    assert.equal(v.code, 0, v.out + v.err);
    assert.match(v.out, /verdict: VALID/);
    assert.match(v.out, /idle by provenance: measured 0, attributed 0, estimated \d+/);
    const again = await sbx(["close", id, "--store", store]);
    assert.equal(again.code, 1);
    assert.match(again.err, /RecordClosed/);
    // One flipped byte anywhere in the record: refused with a code.
    const bytes = readFileSync(record);
    for (const at of [10, Math.floor(bytes.length / 2), bytes.length - 5]) {
      const bad = Buffer.from(bytes);
      bad[at] = (bad[at] ?? 0) ^ 1;
      chmodSync(record, 0o644);
      writeFileSync(record, bad);
      const vb = await sbx(["verify", record, "--json", "--trust", join(store, "host-key.pub.pem")]);
      assert.equal(vb.code, 1, `byte ${String(at)}: ${vb.out}`);
      const { valid, error } = JSON.parse(vb.out) as { valid: boolean; error: { code: string } | null };
      assert.equal(valid, false, `byte ${String(at)}`);
      assert.ok(error !== null && isCodeName(error.code), `byte ${String(at)}: ${vb.out}`);
    }
    writeFileSync(record, bytes);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("released: a tampered snapshot object is SnapshotMismatch, nothing appended; then resume restores into a fresh sandbox", async () => {
  const dir = scratch();
  try {
    const { store, id } = await startAgent(dir);
    const s = await sbx(["suspend", id, "--release", "--store", store]);
    assert.equal(s.code, 0, s.err);
    const fs = FileStore.open(store);
    // The object holding the agent's state ("2\n") is changed in the store.
    const obj = fs.objectPath(digestBytes(utf8("2\n")));
    const orig = readFileSync(obj);
    chmodSync(obj, 0o644);
    writeFileSync(obj, "3\n");
    const before = await kinds(store, id);
    const r = await sbx(["resume", id, "--store", store]);
    assert.equal(r.code, 1);
    assert.match(r.err, /SnapshotMismatch/);
    assert.deepEqual(await kinds(store, id), before);
    writeFileSync(obj, orig);
    const ok = await sbx(["resume", id, "--store", store, ...FINISH_AGENT]);
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /did step 3\ndid step 4\ndid step 5/);
    assert.deepEqual(await kinds(store, id), ["executed", "suspended", "resumed", "executed"]);
    const c = await sbx(["close", id, "--store", store]);
    assert.equal(c.code, 0, c.err);
    assert.match(c.out, /outcome completed/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A host that does not satisfy the manifest (EnvironmentMismatch at resume), close while parked and a
// resume after close: image-durable.test.ts, where the manifest's pinned image is really in a store
// (every manifest pins one, and a durable run runs on it, §14.9.7).

test("two resumes of one parked run at once: exactly one resumes, the other is refused, nothing appended twice", async () => {
  const dir = scratch();
  try {
    const { store, id } = await startAgent(dir);
    assert.equal((await sbx(["suspend", id, "--release", "--store", store])).code, 0);
    // Both start the agent past its wait; the winner supervises it (detached) to its end.
    const cmd = [...FINISH_AGENT];
    const [a, b] = await Promise.all([
      sbx(["resume", id, "--store", store, "--detach", ...cmd]),
      sbx(["resume", id, "--store", store, "--detach", ...cmd]),
    ]);
    const codes = [a.code, b.code].sort();
    assert.deepEqual(codes, [0, 1], a.err + b.err);
    assert.match(a.err + b.err, /StaleHead|AppendConflict|PhaseViolation|RunBusy/);
    const k = await kinds(store, id);
    assert.equal(k.filter((x) => x === "resumed").length, 1, k.join(","));
    // While the winner runs (or after), a third resume is refused too.
    const c = await sbx(["resume", id, "--store", store]);
    assert.equal(c.code, 1);
    assert.match(c.err, /PhaseViolation|RunBusy/);
    const k2 = await kinds(store, id);
    assert.equal(k2.filter((x) => x === "resumed").length, 1, k2.join(","));
    assert.equal((await sbx(["close", id, "--store", store])).code, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("foreground sbx run --store: a fresh nonce per run (same work, different head₀), one executed segment, exit status, close failed", async () => {
  const dir = scratch();
  try {
    const store = join(dir, "store");
    const ids = [];
    for (const n of ["a", "b"]) {
      const ws = join(dir, `ws-${n}`);
      workspaceWithAgent(ws);
      const r = await sbx([
        "run",
        "--store",
        store,
        "--workspace",
        ws,
        "--",
        "/bin/sh",
        "-c",
        "echo hi; exit 3",
      ]);
      assert.equal(r.code, 1, r.err);
      assert.match(r.out, /^hi$/m);
      const id = runIdOf(r.out);
      ids.push(id);
      assert.deepEqual(await kinds(store, id), ["executed"]);
      const c = await sbx(["close", id, "--store", store]);
      assert.equal(c.code, 0, c.err);
      assert.match(c.out, /outcome failed/);
    }
    assert.notEqual(ids[0], ids[1]);
    const u = await sbx(["run", "--store", store, "--unsandboxed", "--", "/bin/true"]);
    assert.equal(u.code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
