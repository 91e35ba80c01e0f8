// `jcp spend`, `jcp revoke` and `jcp verify --ledger/--revocations` with `--store postgres://…` (issue 18): the ledger and the revocation
// list are logs in the shared database. Spends debit the budget until it is spent (Overspend after,
// nothing appended); a revocation in the database's list refuses the next spend (Revoked); a list
// name that does not exist in the database is an empty list, never a file of that name.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PgStore } from "@sbx/host/pg";
import { runCli } from "../src/main.ts";
import { testDb, type TestDb } from "../../host/test/pg/pgtest.ts";

async function jcp(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("jcp", args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

test("jcp spend/revoke --store postgres://: budget held, ledger verifies, revocation refuses", async () => {
  const dir = mkdtempSync(join(tmpdir(), "jcp-pg-"));
  try {
    for (const k of ["root", "alice", "host"])
      assert.equal((await jcp(["keygen", "--out", join(dir, `${k}.pem`)])).code, 0);
    const chain = join(dir, "chain.json");
    const issued = await jcp([
      "issue",
      "--key",
      join(dir, "root.pem"),
      "--holder",
      join(dir, "alice.pem"),
      "--resource",
      "/fs/work/**",
      "--action",
      "read",
      "--uj",
      "3J",
      "--depth",
      "0",
      "--ttl",
      "86400000",
      "--out",
      chain,
    ]);
    assert.equal(issued.code, 0, issued.err);
    const spend = (extra: string[] = []) =>
      jcp([
        "spend",
        "--store",
        db.url,
        "--host-key",
        join(dir, "host.pem"),
        "--chain",
        chain,
        "--ledger",
        "spend/alice",
        "--uj",
        "1J",
        "--root",
        join(dir, "root.pem"),
        "--json",
        ...extra,
      ]);
    for (let i = 1; i <= 3; i++) {
      const r = await spend();
      assert.equal(r.code, 0, r.err);
      assert.equal((JSON.parse(r.out) as { receipts: number }).receipts, i);
    }
    const over = await spend();
    assert.equal(over.code, 1);
    assert.match(over.err, /Overspend/);
    const s = await PgStore.open(db.url);
    try {
      assert.equal((await s.logs.readLog("spend/alice")).entries.length, 3);
    } finally {
      await s.close();
    }
    const ver = await jcp([
      "verify",
      chain,
      "--trust",
      join(dir, "root.pem"),
      "--store",
      db.url,
      "--ledger",
      "spend/alice",
      "--host",
      join(dir, "host.pem"),
      "--json",
    ]);
    assert.equal(ver.code, 0, ver.err);
    const led = (JSON.parse(ver.out) as { ledger: { receipts: number; spent_uj: string } }).ledger;
    assert.deepEqual([led.receipts, led.spent_uj], [3, "3000000"]);
    // A revocation list in the database: the spend that names it is refused.
    const rv = await jcp([
      "revoke",
      "--store",
      db.url,
      "--key",
      join(dir, "root.pem"),
      "--chain",
      chain,
      "--list",
      "revocations/main",
      "--json",
    ]);
    assert.equal(rv.code, 0, rv.err);
    assert.equal((JSON.parse(rv.out) as { length: number }).length, 1);
    const revoked = await spend(["--revocations", "revocations/main"]);
    assert.equal(revoked.code, 1);
    assert.match(revoked.err, /Revoked/);
    const vr = await jcp([
      "verify",
      chain,
      "--trust",
      join(dir, "root.pem"),
      "--store",
      db.url,
      "--revocations",
      "revocations/main",
    ]);
    assert.equal(vr.code, 1, vr.out);
    assert.match(vr.out, /Revoked|revoked/);
    const bad = await spend(["--store", join(dir, "not-a-url")]);
    assert.equal(bad.code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
