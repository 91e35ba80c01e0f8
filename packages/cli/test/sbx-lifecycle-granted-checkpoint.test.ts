// The agent's checkpoint at a suspend (jcp §4.7; lifecycle/checkpoint.ts): `sbx suspend
// --checkpoint-key` parks the run, then appends the holder's signed checkpoint to the leaf's
// checkpoint log with state = the record's head after the suspended segment and spent = what the
// ledger records against the leaf; `jcp checkpoint verify` accepts the log. Refused: a key that is
// not the holder's (NotHolder), a run started under no grant (BadRecord), flags missing (exit 2,
// before anything is parked).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, rmSync } from "node:fs";
import { FileStore } from "@sbx/host/store";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import type { Digest } from "@sbx/wire";
import { kinds, runIdOf, sbx, workspaceWithAgent } from "./lifecycle-helpers.ts";
import { granted, jcp, startAgent } from "./granted-helpers.ts";

async function headOf(store: string, id: Digest): Promise<Digest> {
  const bytes = await FileStore.open(store, { readOnly: true }).readRecordBytes(id);
  assert.ok(bytes);
  return decodeRecord(bytes).record.head;
}

test("sbx suspend --checkpoint-key appends the holder's checkpoint of the parked run (jcp §4.7)", async () => {
  const g = await granted("100J");
  try {
    const { store, id } = await startAgent(g);
    const cpFlags = (key: string) => [
      ...["--checkpoint-key", g.p(key), "--checkpoints", g.p("checkpoints"), "--ledger", g.p("ledger")],
      ...["--trust", g.p("root.key"), "--ledger-host", g.p("host.key")],
    ];
    // Usage errors come before the run is parked.
    const bad = await sbx(["suspend", id, "--store", store, "--checkpoint-key", g.p("alice.key")]);
    assert.equal(bad.code, 2, bad.err);
    assert.deepEqual(await kinds(store, id), []);
    const s = await sbx(["suspend", id, "--store", store, ...cpFlags("alice.key")]);
    assert.equal(s.code, 0, s.err);
    const m = /^checkpoint .*state (blake3:[0-9a-f]{64}).*spent_uj (\d+).*length (\d+)/m.exec(s.out);
    assert.ok(m, s.out);
    assert.deepEqual(await kinds(store, id), ["executed", "suspended"]);
    assert.equal(m[1], await headOf(store, id), "the checkpoint's state is the record's head");
    assert.equal(m[3], "1");
    const v = await jcp([
      ...["checkpoint", "verify", "--chain", g.p("alice.chain"), "--log", g.p("checkpoints")],
      ...["--trust", g.p("root.key"), "--json"],
    ]);
    assert.equal(v.code, 0, v.err);
    // Resume, park again: a second checkpoint, by a key that is not the holder's → NotHolder, and
    // the run is parked all the same (the checkpoint follows the suspend).
    const r = await sbx(["resume", id, "--store", store]);
    assert.equal(r.code, 0, r.err);
    const s2 = await sbx(["suspend", id, "--store", store, ...cpFlags("host.key")]);
    assert.equal(s2.code, 1, s2.out);
    assert.match(s2.err, /\bNotHolder\b/);
    assert.deepEqual(await kinds(store, id), ["executed", "suspended", "resumed", "executed", "suspended"]);
    assert.equal(readdirSync(g.p("checkpoints")).filter((n) => !n.startsWith(".")).length > 0, true);
    assert.equal((await sbx(["close", id, "--store", store])).code, 0);
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
});

test("sbx suspend --checkpoint-key on a run under no grant is refused BadRecord", async () => {
  const g = await granted("100J");
  try {
    const store = g.p("store");
    const ws = workspaceWithAgent(g.p("ws"));
    const r = await sbx(["run", "--detach", "--store", store, "--workspace", ws, "--", "/work/agent.sh"]);
    assert.equal(r.code, 0, r.err);
    const id = runIdOf(r.out);
    const s = await sbx([
      ...["suspend", id, "--store", store, "--checkpoint-key", g.p("alice.key")],
      ...["--checkpoints", g.p("checkpoints"), "--ledger", g.p("ledger"), "--trust", g.p("root.key")],
    ]);
    assert.equal(s.code, 1, s.out);
    assert.match(s.err, /\bBadRecord\b/);
    assert.equal((await sbx(["close", id, "--store", store])).code, 0);
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
});
