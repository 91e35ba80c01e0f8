// npm run test:faults (root): two hosts in two network namespaces, one PostgreSQL store reached over
// veth pairs on private 10.N addresses with a password (twohost.ts). A run started on A, suspended
// with --release, resumed and finished on B; sbx verify VALID from either host with both keys
// trusted (not with A's alone); 1,000 resume attempts of one parked run from both namespaces →
// exactly one resumed segment, 999 StaleHead; 8 metering hosts per namespace on one budget → the
// ledger verifies, total ≤ budget, nothing lost (16 × 10 spends of 1 J on 120 J). The namespaces, links and cluster are removed
// whether it passes or fails, and the test checks that nothing of them is left.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { leftovers, newTwoHosts, setUp, tearDown, tearDownOnSignal } from "../twohost.ts";
import { EACH, runScenario } from "../twohost-scenario.ts";

test("two hosts in two network namespaces share one PostgreSQL store: A → B, resume race, spend race", async () => {
  const t = newTwoHosts();
  const unhook = tearDownOnSignal(t);
  try {
    await setUp(t);
    const r = await runScenario(t, () => undefined);
    assert.deepEqual(r.lifecycle.kinds, ["executed", "suspended", "resumed", "executed", "closed"]);
    for (const v of [r.lifecycle.verifyA, r.lifecycle.verifyB]) {
      assert.equal(v.code, 0, v.out + v.err);
      assert.match(v.out, /verdict: VALID/);
    }
    assert.equal(r.lifecycle.verifyOnlyA.code, 1, r.lifecycle.verifyOnlyA.out);
    assert.deepEqual(r.resume.tally, { ok: 1, StaleHead: 999 });
    assert.deepEqual(r.resume.kinds, ["executed", "suspended", "resumed"]);
    const ok = r.spend.tally["ok"] ?? 0;
    assert.equal(ok + (r.spend.tally["Overspend"] ?? 0), 16 * EACH, JSON.stringify(r.spend.tally));
    assert.equal(r.spend.receipts, ok);
    assert.equal(r.spend.spentUj, BigInt(ok) * 1_000_000n);
    assert.ok(r.spend.spentUj <= r.spend.budgetUj);
    assert.equal(r.spend.spentUj, r.spend.budgetUj); // 160 J asked of 120 J: all of it spent
  } finally {
    unhook();
    tearDown(t);
    assert.deepEqual(leftovers(t.tag), []);
    assert.equal(existsSync(t.dir), false);
  }
});
