// §15.7.1 the pool's ledger as a log in the PostgreSQL store (pool/ledger.ts, logStoreLedger over
// PgLogStore): 8 processes claiming from one pool at once take distinct items and each ends on
// PoolEmpty; the log in the database, restated without the code under test, verifies; a row altered
// by hand is refused with a code, by this store and by a fresh process; a pool whose ledger is in
// the database is never read as an empty folder ledger, nor the reverse.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { addressOf, digestBytes, formatDigest, testKey, type Digest } from "@sbx/wire";
import { replayLedger, summarize, type LedgerState } from "@sbx/sandbox-attest/warmpool";
import {
  claimPoolItem,
  claimPoolItemOn,
  createPoolDir,
  destroyPoolDir,
  folderLedger,
  ledgerAtPath,
  listPoolOn,
  logStoreLedger,
  openPoolDir,
  poolLogDir,
  poolPaths,
} from "@sbx/host/pool";
import { copyFileSync, mkdirSync } from "node:fs";
import { copyLogs, PgStore } from "@sbx/host/pg";
import { FileStore } from "@sbx/host/store";
import { readLog, type LogStore } from "@sbx/host/log";
import { sql, testDb, withDatabaseName, type TestDb } from "../pg/pgtest.ts";

const key = testKey("poollog-host");
const root = mkdtempSync(join(tmpdir(), "sbx-poolpg-"));
const unit = addressOf({ unit: "poolpg-test" });
const grants = addressOf({ grants: "poolpg-test" });
const manifest = addressOf({ m: "poolpg" });
const worker = join(import.meta.dirname, "claim-worker.ts");
let db: TestDb;
let store: PgStore;
let n = 0;
before(async () => {
  db = await testDb();
  store = await PgStore.open(db.url);
});
after(async () => {
  await store.close();
  await db.done();
  rmSync(root, { recursive: true, force: true });
});

async function pool(size: number): Promise<{ dir: string; state: LedgerState }> {
  const dir = join(root, `p${String(n++)}`);
  const state = await createPoolDir(dir, {
    name: "poolpg",
    manifest,
    size,
    key,
    idleProcess: false,
    ledger: logStoreLedger(dir, store.logs),
  });
  return { dir, state };
}

const GENESIS = digestBytes(new TextEncoder().encode("sbx.log/1"));

interface Row {
  seq: string;
  prev: Buffer;
  head: Buffer;
  payload: Buffer;
}

const rows = async (poolId: Digest) =>
  (
    await sql(db.url, "SELECT seq, prev, head, payload FROM sbx_log_entries WHERE log = $1 ORDER BY seq", [
      `pool/${poolId}`,
    ])
  ).rows as Row[];

/**
 * The ledger restated from the database rows alone: rows 1, 2, … each extending the head before it
 * (the head after a row the BLAKE3 of `<head before>\n<payload>`), each payload envelope lines; then
 * §15.7 from genesis on the envelopes with the pool's own descriptor.
 */
async function fromRows(dir: string, poolId: Digest) {
  let head = GENESIS;
  const envs: unknown[] = [];
  for (const [i, r] of (await rows(poolId)).entries()) {
    assert.equal(Number(r.seq), i + 1, "no gap");
    assert.equal(formatDigest(new Uint8Array(r.prev)), head, `row ${r.seq} extends the head before it`);
    const next = digestBytes(Buffer.concat([Buffer.from(`${head}\n`), r.payload]));
    assert.equal(formatDigest(new Uint8Array(r.head)), next, `row ${r.seq}'s head`);
    for (const l of r.payload.toString().split("\n").slice(0, -1)) envs.push(JSON.parse(l));
    head = next;
  }
  const desc = JSON.parse(readFileSync(poolPaths(dir).descriptor, "utf8")) as unknown;
  return summarize(replayLedger({ pool: desc, entries: envs }, { hosts: [key.did] }));
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return String((e as { code?: unknown }).code);
  }
  return "accepted";
}

/** A fresh process opening the pool's ledger in the database: one claim attempt, its line. */
function freshClaim(dir: string): { item?: string; code?: string; retries?: number } {
  const r = spawnSync(process.execPath, ["--import", "tsx", worker, dir, "0", "1", db.url], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  // The worker also says how many signatures it made (`signed`): not what these tests look at.
  const out = JSON.parse(r.stdout.trim()) as {
    item?: string;
    code?: string;
    retries?: number;
    signed?: number;
  };
  delete out.signed;
  return out;
}

test("the ledger is the log pool/<pool_id> in the database: one row per operation, nothing in the folder", async () => {
  const { dir, state } = await pool(2);
  assert.ok(!existsSync(poolLogDir(dir)), "no ledger folder");
  assert.ok(existsSync(ledgerAtPath(dir)), "the marker names the store kind");
  await claimPoolItemOn(logStoreLedger(dir, store.logs), dir, {
    unit,
    grants,
    key,
    now: () => Date.now() + 5,
  });
  const lines = (await rows(state.pool_id)).map((r) => r.payload.toString().split("\n").length - 1);
  assert.deepEqual(lines, [1, 1, 2], "provisioned, provisioned, accrued+claimed");
  const listed = await listPoolOn(logStoreLedger(dir, store.logs), dir);
  assert.deepEqual(
    listed.items.map((i) => [i.item, i.state]),
    [
      ["item-0000", "claimed"],
      ["item-0001", "resident"],
    ],
  );
  assert.deepEqual(summarize(listed.state), await fromRows(dir, state.pool_id));
});

test("8 processes claiming from one pool in the database: each item claimed once, then PoolEmpty", async (t) => {
  const size = 24;
  const { dir, state } = await pool(size);
  const start = Date.now() + 4000;
  const cmd =
    Array.from(
      { length: 8 },
      () => `node --import tsx ${worker} ${dir} ${String(start)} 100 '${db.url}' &`,
    ).join(" ") + " wait";
  const r = spawnSync("sh", ["-c", cmd], { encoding: "utf8" });
  assert.equal(r.stderr, "", "no claimant failed");
  const results = r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { item?: string; retries?: number; code?: string });
  const items = results.flatMap((x) => (x.item === undefined ? [] : [x.item]));
  assert.equal(items.length, size, "every item claimed");
  assert.equal(new Set(items).size, size, "no item claimed twice");
  const codes = results.flatMap((x) => (x.code === undefined ? [] : [x.code]));
  assert.deepEqual(
    codes,
    Array<string>(8).fill("PoolEmpty"),
    "each claimant ends on PoolEmpty, nothing else",
  );
  // How often heads were lost depends on how the 8 processes' starts overlapped (a loaded machine
  // may start them apart): reported, not asserted. The next test loses a head on purpose.
  const retries = results.reduce((a, x) => a + (x.retries ?? 0), 0);
  t.diagnostic(`heads lost and decided again: ${String(retries)}`);
  const sum = await fromRows(dir, state.pool_id);
  assert.equal(sum.items.claimed, size);
  assert.equal(sum.items.resident, 0);
  assert.equal(sum.entries, size * 3, "per item: provisioned, then accrued+claimed");
  assert.deepEqual(summarize(await logStoreLedger(dir, store.logs).open([key.did])), sum);
  const destroyed = await destroyPoolDir(dir, key, Date.now, logStoreLedger(dir, store.logs));
  assert.ok(destroyed.account.closed);
  assert.ok(!existsSync(poolLogDir(dir)));
});

test("a claim whose head another claim took first gets StaleHead, decides again and takes another item", async () => {
  const { dir } = await pool(3);
  let interloper: string | undefined;
  // The claim's store lets another claim commit just before the claim's own append.
  const logs: LogStore = {
    readLog: (name) => store.logs.readLog(name),
    update: (name, build) => store.logs.update(name, build),
    appendLog: async (name, expected, payload) => {
      if (interloper === undefined) {
        interloper = "";
        interloper = (await claimPoolItemOn(logStoreLedger(dir, store.logs), dir, { unit, grants, key }))
          .claim.item;
      }
      return store.logs.appendLog(name, expected, payload);
    },
  };
  const c = await claimPoolItemOn(logStoreLedger(dir, logs), dir, { unit, grants, key });
  assert.equal(c.retries, 1, "the lost head was decided again");
  assert.ok(interloper !== undefined && interloper !== "" && c.claim.item !== interloper, "another item");
  const sum = await fromRows(dir, (await logStoreLedger(dir, store.logs).open()).pool_id);
  assert.equal(sum.items.claimed, 2);
  assert.equal(sum.items.resident, 1);
});

test("a row altered in the database is refused with a code: by this store, and by a fresh process", async () => {
  const { dir, state } = await pool(3);
  const ledger = logStoreLedger(dir, store.logs);
  await ledger.open(); // this store now holds the verified log
  const log = `pool/${state.pool_id}`;
  const all = await rows(state.pool_id);
  const [first] = all;
  assert.ok(first);
  const text = first.payload.toString();
  const at = text.indexOf('"sig":"') + 8;
  const bad = Buffer.from(text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1));
  await sql(db.url, "UPDATE sbx_log_entries SET payload = $3 WHERE log = $1 AND seq = $2", [log, 1, bad]);
  assert.equal(await refusal(ledger.open()), "LogBroken", "the store's held entries changed");
  assert.equal(
    await refusal(claimPoolItemOn(ledger, dir, { unit, grants, key })),
    "LogBroken",
    "no claim on it",
  );
  assert.deepEqual(
    freshClaim(dir),
    { code: "LogBroken" },
    "a fresh process: the row's head no longer matches",
  );

  // The same change with every head after it recomputed (a consistent log): the §15.7 check of the
  // envelope refuses it.
  let head = GENESIS;
  for (const [i, r] of all.entries()) {
    const payload = i === 0 ? bad : r.payload;
    const next = digestBytes(Buffer.concat([Buffer.from(`${head}\n`), payload]));
    await sql(
      db.url,
      "UPDATE sbx_log_entries SET prev = $3, head = $4, payload = $5 WHERE log = $1 AND seq = $2",
      [log, i + 1, Buffer.from(digestRaw(head)), Buffer.from(digestRaw(next)), payload],
    );
    head = next;
  }
  assert.deepEqual(freshClaim(dir), { code: "BadSignature" }, "a fresh process: the envelope's signature");
  // Put back: the ledger verifies again and a claim goes through.
  await sql(db.url, "DELETE FROM sbx_log_entries WHERE log = $1", [log]);
  head = GENESIS;
  for (const [i, r] of all.entries()) {
    const next = digestBytes(Buffer.concat([Buffer.from(`${head}\n`), r.payload]));
    assert.equal(formatDigest(new Uint8Array(r.head)), next);
    await sql(
      db.url,
      "INSERT INTO sbx_log_entries (log, seq, prev, head, payload, token) VALUES ($1, $2, $3, $4, $5, gen_random_uuid())",
      [log, i + 1, r.prev, r.head, r.payload],
    );
    head = next;
  }
  assert.deepEqual(freshClaim(dir), { item: "item-0000", retries: 0 });
});

function digestRaw(d: Digest): Uint8Array {
  return Buffer.from(d.slice("blake3:".length), "hex");
}

test("a pool whose ledger is in the database is not read from the folder, nor the reverse (PoolLedgerElsewhere)", async () => {
  const { dir } = await pool(1);
  assert.equal(await refusal(folderLedger(dir).open()), "PoolLedgerElsewhere");
  assert.throws(() => openPoolDir(dir), { code: "PoolLedgerElsewhere" });
  const local = join(root, `p${String(n++)}`);
  await createPoolDir(local, { name: "local", manifest, size: 1, key, idleProcess: false });
  assert.equal(await refusal(logStoreLedger(local, store.logs).open()), "PoolLedgerElsewhere");
  assert.equal(
    await refusal(claimPoolItemOn(logStoreLedger(local, store.logs), local, { unit, grants, key })),
    "PoolLedgerElsewhere",
  );
  assert.equal(openPoolDir(local).account.items.size, 1, "its folder ledger is untouched");
});

test("sbx store copy's copyLogs: a file store's pool ledger folder to the log pool/<pool_id> and back", async () => {
  const url = withDatabaseName(db.url, "sbx_pool_copy");
  await sql(db.url, "CREATE DATABASE sbx_pool_copy");
  await PgStore.init(url);
  const pg = await PgStore.open(url);
  try {
    const src = FileStore.open(join(root, "copy-src"), { create: true });
    const a = join(src.root, "pools", "a");
    const made = await createPoolDir(a, { name: "a", manifest, size: 2, key, idleProcess: false });
    claimPoolItem(a, { unit, grants, key });
    const want = summarize(openPoolDir(a));
    const there = await copyLogs(src, pg);
    assert.deepEqual(there, { logs: 1, entries: 3 }, "provisioned ×2, accrued+claimed");
    const name = `pool/${made.pool_id}`;
    const inPg = await pg.logs.readLog(name);
    const inDir = readLog(poolLogDir(a));
    assert.deepEqual(
      inPg.entries.map((e) => e.head),
      inDir.entries.map((e) => e.head),
    );
    // Back into another store directory holding that pool's descriptor: into its ledger folder.
    const dst = FileStore.open(join(root, "copy-dst"), { create: true });
    const b = join(dst.root, "pools", "b");
    mkdirSync(b, { recursive: true });
    copyFileSync(poolPaths(a).descriptor, poolPaths(b).descriptor);
    assert.deepEqual(await copyLogs(pg, dst), { logs: 1, entries: 3 });
    assert.deepEqual(summarize(openPoolDir(b)), want, "the pool's ledger folder verifies to the same state");
    assert.deepEqual(await copyLogs(src, pg), { logs: 1, entries: 0 }, "again: nothing to move");
    // A store directory without that pool keeps it as any log, under logs/.
    const other = FileStore.open(join(root, "copy-other"), { create: true });
    await copyLogs(pg, other);
    assert.equal(readLog(join(other.root, "logs", "pool", made.pool_id)).head, inPg.head);
  } finally {
    await pg.close();
  }
});
