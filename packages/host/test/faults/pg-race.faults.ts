// npm run test:faults: 1,000 resume attempts of one parked run from two processes (two hosts) at
// once against PostgreSQL: exactly one resumed segment, 999 StaleHead (§13.7).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { testDb, type TestDb } from "../pg/pgtest.ts";
import { resumeRace } from "../pg/race.ts";

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

test("2 hosts × 500 resume attempts of one parked run: exactly one resumed segment, 999 StaleHead", async () => {
  const { tally, record } = await resumeRace(db.url, 2, 1000);
  assert.deepEqual(tally, { ok: 1, StaleHead: 999 });
  assert.equal(record.segments.length, 3);
  assert.equal(record.segments[2]?.kind, "resumed");
});
