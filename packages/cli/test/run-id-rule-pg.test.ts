// One id rule everywhere (issue 29) on a PostgreSQL run store: `sbx verify RUN` and `sbx report RUN`
// with `--store postgres://…` take a unique prefix and refuse an ambiguous or unknown one word for
// word as `sbx show` does there (the runs copied in from a folder by `sbx store copy`).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testDb, type TestDb } from "../../host/test/pg/pgtest.ts";
import { assertLikeShow, runsSharingADigit, sbx } from "./run-id-helpers.ts";

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

test("verify and report on PostgreSQL take a unique prefix, and refuse as show does", async () => {
  const runs = await runsSharingADigit();
  const copied = await sbx(["store", "copy", "--from", runs.store, "--to", db.url]);
  assert.equal(copied.code, 0, copied.err);
  const out = join(mkdtempSync(join(tmpdir(), "sbx-idrule-pg-")), "report.html");
  await assertLikeShow("verify", ["--any-signer"], runs, db.url);
  await assertLikeShow("report", ["--out", out], runs, db.url);
});
