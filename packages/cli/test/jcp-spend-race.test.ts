// Concurrent `jcp spend` on one grant (jcp §4.3): the ledger is an append-only log whose appends claim
// the head they extend, so no debit is lost and no budget is passed. The 1,000-spend run is in
// test/faults/spend-race.faults.ts (npm run test:faults).
import { test } from "node:test";
import assert from "node:assert/strict";
import { race } from "./spend-race.ts";

test("8 concurrent 1 J spends on a 5 J grant: exactly 5 are recorded, 3 refused Overspend", async () => {
  const r = await race(8, 1, 5);
  assert.equal(r.ok, 5);
  assert.equal(r.refused.get("Overspend"), 3);
});

test("8 processes × 10 spends of 1 J on a 60 J grant: 60 recorded, 20 Overspend, none lost", async () => {
  const r = await race(8, 10, 60);
  assert.equal(r.ok, 60);
  assert.equal(r.refused.get("Overspend"), 20);
});
