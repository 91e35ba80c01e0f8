// `sbx store init` and `sbx store copy` (§13.7): a real run copied from a store directory into
// PostgreSQL and back with every object, verified on arrival and by `sbx verify` afterwards.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes, testKey, utf8 } from "@sbx/wire";
import { FileStore } from "@sbx/host/store";
import { FileLogStore, LOG_GENESIS, type LogState } from "@sbx/host/log";
import { PgStore } from "@sbx/host/pg";
import { runCli } from "../src/main.ts";
import { fixtureRun } from "../../host/test/store/fixture-run.ts";
import { sql, testDb, withDatabaseName, type TestDb } from "../../host/test/pg/pgtest.ts";

async function sbx(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

test("sbx store init: applies the schema once, then has nothing to apply; an uninitialised database is refused (exit 2)", async () => {
  const fresh = await sbx(["store", "init", "--store", db.url, "--json"]);
  assert.equal(fresh.code, 0, fresh.err);
  assert.deepEqual(JSON.parse(fresh.out), {
    store: db.url,
    kind: "postgres",
    schema_before: 1,
    schema_after: 1,
  });
  const dir = join(mkdtempSync(join(tmpdir(), "sbx-init-")), "s");
  assert.equal((await sbx(["store", "init", "--store", dir])).code, 0);
  FileStore.open(dir);
  // A database without the schema is refused by every opener, naming the command that fixes it.
  await sql(db.url, "CREATE DATABASE sbx_empty_for_init");
  const empty = withDatabaseName(db.url, "sbx_empty_for_init");
  const refused = await sbx(["store", "copy", "--from", dir, "--to", empty]);
  assert.equal(refused.code, 2);
  assert.match(refused.err, /StoreUnusable: .*sbx store init/);
  const applied = await sbx(["store", "init", "--store", empty, "--json"]);
  assert.equal((JSON.parse(applied.out) as { schema_before: number }).schema_before, 0);
});

test("sbx store copy: a directory to PostgreSQL and back, every object, then sbx verify VALID", async () => {
  const run = await fixtureRun();
  const big = new Uint8Array(5 * (1 << 20) + 7);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
  const bigAddr = run.store.putObjectSync(big);
  const there = await sbx(["store", "copy", "--from", run.store.root, "--to", db.url, "--json"]);
  assert.equal(there.code, 0, there.err);
  const r = JSON.parse(there.out) as { records: number; segments: number; objects: number; signed: number };
  assert.deepEqual([r.records, r.segments, r.signed], [1, 5, 2]);
  // Again: nothing new, the record already whole.
  const again = JSON.parse(
    (await sbx(["store", "copy", "--from", run.store.root, "--to", db.url, "--json"])).out,
  ) as {
    segments: number;
    bytes: number;
  };
  assert.deepEqual([again.segments, again.bytes], [0, 0]);

  const back = join(mkdtempSync(join(tmpdir(), "sbx-back-")), "store");
  const home = await sbx(["store", "copy", "--from", db.url, "--to", back, "--json"]);
  assert.equal(home.code, 0, home.err);
  const copied = FileStore.open(back);
  const bytes = copied.getObjectSync(bigAddr);
  assert.ok(bytes !== null && digestBytes(bytes) === bigAddr);
  const v = await sbx(["verify", copied.recordPath(run.id), "--store", back, "--trust", testKey("host").did]);
  assert.equal(v.code, 0, v.err + v.out);
  assert.match(v.out, /verdict: VALID/);

  // A chunk altered in the database is refused on the way out, with its code.
  await sql(
    db.url,
    "UPDATE sbx_chunks SET data = overlay(data placing '\\xff'::bytea from 1) WHERE length(data) = $1",
    [1 << 20],
  );
  const bad = await sbx([
    "store",
    "copy",
    "--from",
    db.url,
    "--to",
    join(mkdtempSync(join(tmpdir(), "sbx-bad-")), "s"),
  ]);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /ObjectMismatch/);
});

/** A log's entries in a comparable form (a folder log's payloads are Buffers, PostgreSQL's Uint8Arrays). */
const entriesOf = (s: LogState) => ({
  head: s.head,
  entries: s.entries.map((e) => [e.seq, e.prev, e.head, Buffer.from(e.payload).toString("hex")]),
});

test("sbx store copy: the ledgers too (spend, revocation, mint, checkpoint, pool), both ways, verified on arrival", async () => {
  const url = withDatabaseName(db.url, "sbx_ledgers_copy");
  await sql(db.url, "CREATE DATABASE sbx_ledgers_copy");
  assert.equal((await sbx(["store", "init", "--store", url])).code, 0);
  const dir = join(mkdtempSync(join(tmpdir(), "sbx-logs-")), "store");
  assert.equal((await sbx(["store", "init", "--store", dir])).code, 0);
  const files = new FileLogStore(join(dir, "logs"));
  const names = [
    "checkpoint",
    "mint/issuer",
    "pool/p1",
    "revocation",
    `spend/${digestBytes(utf8("grant")).slice(7)}`,
  ];
  for (const [i, name] of names.entries()) {
    let h = LOG_GENESIS;
    for (let k = 0; k <= i; k++) h = await files.appendLog(name, h, utf8(`{"${name}":${String(k)}}`));
  }
  const there = await sbx(["store", "copy", "--from", dir, "--to", url, "--json"]);
  assert.equal(there.code, 0, there.err);
  assert.deepEqual(
    ((r) => [r.logs, r.entries])(JSON.parse(there.out) as { logs: number; entries: number }),
    [5, 15],
  );
  const pg = await PgStore.open(url);
  try {
    for (const name of names)
      assert.deepEqual(entriesOf(await pg.logs.readLog(name)), entriesOf(await files.readLog(name)));
    // More entries in PostgreSQL; a directory holding a prefix continues from its head.
    const spend = names[4]!;
    await pg.logs.appendLog(spend, (await pg.logs.readLog(spend)).head, utf8('{"more":1}'));
    const back = await sbx(["store", "copy", "--from", url, "--to", dir, "--json"]);
    assert.equal(back.code, 0, back.err);
    assert.deepEqual(
      ((r) => [r.logs, r.entries])(JSON.parse(back.out) as { logs: number; entries: number }),
      [5, 1],
    );
    assert.deepEqual(entriesOf(await files.readLog(spend)), entriesOf(await pg.logs.readLog(spend)));
    // A copy again moves nothing.
    const again = JSON.parse((await sbx(["store", "copy", "--from", dir, "--to", url, "--json"])).out) as {
      entries: number;
    };
    assert.equal(again.entries, 0);

    // A destination whose ledger is not a prefix of the source's: LogDiverged, nothing appended.
    await files.appendLog("revocation", (await files.readLog("revocation")).head, utf8('{"dir only":1}'));
    await pg.logs.appendLog("revocation", (await pg.logs.readLog("revocation")).head, utf8('{"pg only":1}'));
    const div = await sbx(["store", "copy", "--from", dir, "--to", url]);
    assert.equal(div.code, 1);
    assert.match(div.err, /LogDiverged/);
    assert.equal((await pg.logs.readLog("revocation")).entries.length, 5);

    // A ledger entry altered in the source database is refused on the way out (LogBroken).
    await sql(url, "UPDATE sbx_log_entries SET payload = 'X' WHERE log = 'checkpoint' AND seq = 1");
    const fresh = join(mkdtempSync(join(tmpdir(), "sbx-logs-")), "store");
    const broken = await sbx(["store", "copy", "--from", url, "--to", fresh]);
    assert.equal(broken.code, 1);
    assert.match(broken.err, /LogBroken/);
  } finally {
    await pg.close();
  }
});
