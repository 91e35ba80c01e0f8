// Concurrent spends on one grant from several metering hosts, the ledger in PostgreSQL (jcp §4.3,
// §13.7): the budget check and the ledger append are one transaction, so the ledger verifies, the
// total never passes the budget, and every spend a writer was told succeeded is a receipt.
// The 8-writer run is in test/faults/pg-spend-race.faults.ts.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { testDb, type TestDb } from "../../host/test/pg/pgtest.ts";
import { spendRace } from "./pg-spend-race.ts";

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

test("4 writers × 4 spends of 1 J on a 12 J grant in a PostgreSQL ledger: 12 receipts, 4 Overspend, none lost", async () => {
  const r = await spendRace(db.url, 4, 4, 12);
  assert.deepEqual(r.tally, { ok: 12, Overspend: 4 });
  assert.equal(r.receipts, 12);
  assert.equal(r.spentUj, 12_000_000n);
});
