// `sbx pool …` with a PostgreSQL store (sandbox-attest §15.7.1), through the real binary: the pool's
// folder is on this host (`--pool NAME` under SBX_LOCAL_DIR), its ledger the log pool/<pool_id> in
// the database; create, claim, list, verify, evict and destroy work with `--store postgres://…` or
// SBX_STORE, the file store refuses the pool (PoolLedgerElsewhere), and a row altered by hand is
// refused by the next command (a fresh process) with its code; a parked sandbox claimed into a run
// under a grant debits the grant's ledger as on the file store.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { addressOf } from "@sbx/wire";
import { sbx } from "./lifecycle-helpers.ts";
import { runCli } from "../src/main.ts";
import { sql, testDb, type TestDb } from "../../host/test/pg/pgtest.ts";

const local = mkdtempSync(join(tmpdir(), "sbx-pool-pg-"));
const env = { SBX_LOCAL_DIR: local, SBX_STORE: "" };
const MANIFEST = "blake3:" + "cd".repeat(32);
const unit = addressOf({ unit: "sbx-pool-pg" });
const grants = addressOf({ grants: "sbx-pool-pg" });
let db: TestDb;
before(async () => {
  db = await testDb();
});
after(async () => {
  await db.done();
  rmSync(local, { recursive: true, force: true });
});

interface Listed {
  pool_id: string;
  items: { item: string; state: string }[];
}

test("sbx pool create/claim/list/verify/evict/destroy --store postgres://: the ledger is in the database", async () => {
  const made = await sbx(
    [
      "pool",
      "create",
      "--store",
      db.url,
      "--pool",
      "p1",
      "--manifest",
      MANIFEST,
      "-n",
      "3",
      "--no-sandbox",
      "--no-idle",
      "--json",
    ],
    env,
  );
  assert.equal(made.code, 0, made.err);
  const dir = join(local, "pools", "p1");
  assert.ok(existsSync(join(dir, "pool.json")), "the pool's folder is on this host, under SBX_LOCAL_DIR");
  assert.ok(!existsSync(join(dir, "ledger")), "no ledger folder");
  const poolId = (JSON.parse(made.out) as { pool_id: string }).pool_id;
  const logRows = async () =>
    Number(
      (
        (await sql(db.url, "SELECT count(*) AS n FROM sbx_log_entries WHERE log = $1", [`pool/${poolId}`]))
          .rows[0] as { n: string }
      ).n,
    );
  assert.equal(await logRows(), 3, "one row per provisioned item");

  const claimed = await sbx(
    ["pool", "claim", "--store", db.url, "--pool", "p1", "--unit", unit, "--grants", grants, "--json"],
    env,
  );
  assert.equal(claimed.code, 0, claimed.err);
  assert.equal((JSON.parse(claimed.out) as { claim: { item: string } }).claim.item, "item-0000");
  assert.equal(await logRows(), 4, "the claim's residency and claim: one row");

  // SBX_STORE selects the database as --store does; the listing is the ledger's view.
  const listed = await sbx(["pool", "list", "--pool", "p1", "--json"], { ...env, SBX_STORE: db.url });
  assert.equal(listed.code, 0, listed.err);
  const view = JSON.parse(listed.out) as Listed;
  assert.equal(view.pool_id, poolId);
  assert.deepEqual(
    view.items.map((i) => [i.item, i.state]),
    [
      ["item-0000", "claimed"],
      ["item-0001", "resident"],
      ["item-0002", "resident"],
    ],
  );

  const verified = await sbx(
    ["pool", "verify", "--store", db.url, "--pool", "p1", "--any-signer", "--json"],
    env,
  );
  assert.equal(verified.code, 0, verified.err);
  const v = JSON.parse(verified.out) as { valid: boolean; entries: number; ledger: string };
  assert.equal(v.valid, true);
  assert.equal(v.entries, 5);
  assert.equal(v.ledger, `log pool/${poolId}`);

  // The file store (the same folder, no database) refuses the pool rather than reading no ledger.
  const asFile = await sbx(["pool", "list", "--store", local, "--pool", "p1"], env);
  assert.equal(asFile.code, 1);
  assert.match(asFile.err, /PoolLedgerElsewhere/);

  const key = join(local, "host-key.pem");
  const evicted = await sbx(
    ["pool", "evict", "--store", db.url, "--pool", "p1", "item-0001", "--key", key, "--json"],
    env,
  );
  assert.equal(evicted.code, 0, evicted.err);
  const destroyed = await sbx(["pool", "destroy", "--store", db.url, "--pool", "p1", "--json"], env);
  assert.equal(destroyed.code, 0, destroyed.err);
  const closed = await sbx(
    [
      "pool",
      "verify",
      "--store",
      db.url,
      "--pool",
      "p1",
      "--trust",
      join(local, "host-key.pub.pem"),
      "--closed",
    ],
    env,
  );
  assert.equal(closed.code, 0, closed.err);
  assert.match(closed.out, /1 claimed, 2 evicted, 0 resident/);
});

test("a row of the pool's log altered in the database: the next sbx pool command refuses it (LogBroken)", async () => {
  const made = await sbx(
    [
      "pool",
      "create",
      "--store",
      db.url,
      "--pool",
      "p2",
      "--manifest",
      MANIFEST,
      "-n",
      "2",
      "--no-sandbox",
      "--no-idle",
      "--json",
    ],
    env,
  );
  assert.equal(made.code, 0, made.err);
  const log = `pool/${(JSON.parse(made.out) as { pool_id: string }).pool_id}`;
  const row = (await sql(db.url, "SELECT payload FROM sbx_log_entries WHERE log = $1 AND seq = 2", [log]))
    .rows[0] as { payload: Buffer };
  const text = row.payload.toString();
  const at = text.indexOf('"at_ms":') + 8;
  const bad = text.slice(0, at) + (text[at] === "1" ? "2" : "1") + text.slice(at + 1);
  await sql(db.url, "UPDATE sbx_log_entries SET payload = $2 WHERE log = $1 AND seq = 2", [
    log,
    Buffer.from(bad),
  ]);
  for (const args of [
    ["pool", "list", "--store", db.url, "--pool", "p2"],
    ["pool", "claim", "--store", db.url, "--pool", "p2", "--unit", unit, "--grants", grants],
    ["pool", "verify", "--store", db.url, "--pool", "p2", "--any-signer"],
  ]) {
    const r = await sbx(args, env);
    assert.equal(r.code, 1, `${args[1]!}: ${r.err}`);
    assert.match(r.err, /LogBroken/, args[1]);
  }
});

test("a parked sandbox in a pool on PostgreSQL claimed into a run under a grant: one debit, the claim in the database", async () => {
  const p = (n: string) => join(local, n);
  const jcp = async (argv: string[]) => {
    const err: string[] = [];
    const code = await runCli("jcp", argv, { out: () => undefined, err: (l) => err.push(l) });
    assert.equal(code, 0, err.join("\n"));
  };
  for (const k of ["root", "alice", "host"]) await jcp(["keygen", "--out", p(`${k}.key`)]);
  await jcp([
    ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), "--resource", "/fs/work/**"],
    ...["--action", "read", "--action", "write", "--uj", "100J", "--depth", "0", "--ttl", "86400000"],
    ...["--out", p("work.chain")],
  ]);
  const made = await sbx(
    [
      "pool",
      "create",
      "--store",
      db.url,
      "--pool",
      "g",
      "--manifest",
      MANIFEST,
      "-n",
      "1",
      "--key",
      p("host.key"),
      "--json",
    ],
    env,
  );
  assert.equal(made.code, 0, made.err);
  const log = `pool/${(JSON.parse(made.out) as { pool_id: string }).pool_id}`;
  try {
    const r = await sbx(
      [
        ...["pool", "claim", "--store", db.url, "--pool", "g", "--key", p("host.key")],
        ...["--grant", p("work.chain"), "--trust", p("root.key"), "--ledger", p("ledger")],
        ...["--json", "--", "sh", "-c", "echo granted"],
      ],
      env,
    );
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as {
      item: string;
      energy: { total_uj: string };
      grant: { spent_uj: string; remaining_uj: string };
    };
    assert.equal(j.item, "item-0000");
    assert.equal(j.grant.spent_uj, j.energy.total_uj, "one debit of the receipt's total, residency included");
    assert.equal(BigInt(j.grant.remaining_uj), 100_000_000n - BigInt(j.energy.total_uj));
    const rows = (await sql(db.url, "SELECT payload FROM sbx_log_entries WHERE log = $1 ORDER BY seq", [log]))
      .rows as { payload: Buffer }[];
    const kinds = rows.map((row) =>
      row.payload
        .toString()
        .split("\n")
        .slice(0, -1)
        .map(
          (l) =>
            (
              JSON.parse(
                Buffer.from((JSON.parse(l) as { payload: string }).payload, "base64").toString(),
              ) as { kind: string }
            ).kind,
        ),
    );
    assert.deepEqual(kinds, [["provisioned"], ["accrued", "claimed"]]);
  } finally {
    const d = await sbx(["pool", "destroy", "--store", db.url, "--pool", "g", "--key", p("host.key")], env);
    assert.equal(d.code, 0, d.err);
  }
});
