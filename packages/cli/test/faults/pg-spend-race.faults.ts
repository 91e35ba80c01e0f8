// npm run test:faults: 8 metering hosts (processes, each with its own key) × 25 spends of 1 J on one
// 150 J grant, the ledger in PostgreSQL: the ledger verifies, 150 receipts, 50 Overspend, none lost.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { testDb, type TestDb } from "../../../host/test/pg/pgtest.ts";
import { spendRace } from "../pg-spend-race.ts";

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

test("8 writers × 25 spends of 1 J on a 150 J grant in PostgreSQL: 150 receipts, 50 Overspend, total = budget", async () => {
  const r = await spendRace(db.url, 8, 25, 150);
  assert.deepEqual(r.tally, { ok: 150, Overspend: 50 });
  assert.equal(r.receipts, 150);
  assert.equal(r.spentUj, 150_000_000n);
});
