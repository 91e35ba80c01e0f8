// The larger spend race of jcp §4.3 (npm run test:faults): 8 processes, 1,000 spends of 1 J in all,
// on one 900 J grant and one ledger: 900 recorded, 100 refused Overspend, none lost, the ledger
// verifies. Each process resumes from the state it verified (lib/spender.ts), so every receipt is
// verified once per process rather than once per spend.
import { test } from "node:test";
import assert from "node:assert/strict";
import { race } from "../spend-race.ts";

test("8 processes × 125 spends of 1 J on a 900 J grant: 900 recorded, 100 Overspend", async () => {
  const t0 = Date.now();
  const r = await race(8, 125, 900);
  assert.equal(r.ok, 900);
  assert.equal(r.refused.get("Overspend"), 100);
  console.log(
    `spend race: 1,000 spends by 8 processes, ${r.retries} StaleHead retries, ${Date.now() - t0} ms`,
  );
});
