// Races decided by PostgreSQL (§13.7): many processes resuming one parked run, every attempt built on
// the parked head: exactly one resumed segment, every other attempt StaleHead. The 1,000-attempt run
// is faults/pg-race.faults.ts (npm run test:faults).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { testDb, type TestDb } from "./pgtest.ts";
import { resumeRace } from "./race.ts";

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

test("4 processes × 50 resume attempts of one parked run: one resumed segment, 199 StaleHead", async () => {
  const { tally, record } = await resumeRace(db.url, 4, 200);
  assert.deepEqual(tally, { ok: 1, StaleHead: 199 });
  assert.equal(record.segments.length, 3);
  assert.equal(record.segments[2]?.kind, "resumed");
  assert.equal(record.phase, "active");
});
