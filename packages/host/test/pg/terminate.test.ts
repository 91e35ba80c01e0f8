// A client whose connection is killed by the server mid-write (pg_terminate_backend from another
// connection, as an administrator or a failover does), while the client process lives on: during an
// object upload (its chunks in, the object's rows being written in their transaction), a log append
// (the entry being inserted in the transaction that read the log), a segment append (the one-statement
// insert) and a record import (its header row written, its segment rows being inserted). Nothing of
// the killed attempt is ever visible; the client retries on a new connection and its write lands
// exactly once, whole (§13.7, conn.ts's retry rule).
//
// To kill the backend at a known point, another connection holds an EXCLUSIVE lock on the table the
// write inserts into (reads still pass): the client's statement waits on it, is found waiting in
// pg_stat_activity and terminated; its retry waits again, and only then is the lock released.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { digestBytes, parseDigest, utf8, type Digest } from "@sbx/wire";
import { encodeHeader, encodeSegmentLine, runGenesis, segmentHead } from "@sbx/sandbox-attest/runrecord";
import { readRun } from "@sbx/sandbox-attest/store";
import { LOG_GENESIS } from "../../src/log/index.ts";
import { importRecord, PgStore } from "../../src/pg/index.ts";
import { testDb, type TestDb } from "./pgtest.ts";

const d = (s: string): Digest => digestBytes(utf8(s));
const raw = (a: Digest) => Buffer.from(parseDigest(a));

let db: TestDb;
let store: PgStore;
let look: pg.Client;
before(async () => {
  db = await testDb();
  store = await PgStore.open(db.url, { retryMs: 20_000 });
  look = new pg.Client({ connectionString: db.url });
  await look.connect();
});
after(async () => {
  await look.end();
  await store.close();
  await db.done();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The backend waiting on a lock with a statement starting `like`, other than `not`; polled. */
async function waiting(like: string, not: number | null): Promise<number> {
  for (let i = 0; i < 1000; i++) {
    const r = await look.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1 AND pid <> $2 AND datname = current_database()",
      [`${like}%`, not ?? 0],
    );
    if (r.rows[0] !== undefined) return r.rows[0].pid;
    await sleep(10);
  }
  throw new Error(`no backend waits with ${like}`);
}

/**
 * killedOnce runs `write` while `table` is locked EXCLUSIVE: the backend whose statement starting
 * `like` waits on it is terminated, `visible` must be false then and once the retry waits again,
 * then the lock is released and `write` must finish.
 */
async function killedOnce<T>(
  table: string,
  like: string,
  write: () => Promise<T>,
  visible: () => Promise<boolean>,
): Promise<T> {
  const lock = new pg.Client({ connectionString: db.url });
  await lock.connect();
  let pending: Promise<T> | null = null;
  try {
    await lock.query("BEGIN");
    await lock.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
    pending = write();
    pending.catch(() => undefined); // awaited below
    const first = await waiting(like, null);
    assert.equal(await visible(), false, "visible while its transaction waits");
    const killed = await look.query<{ t: boolean }>("SELECT pg_terminate_backend($1) AS t", [first]);
    assert.equal(killed.rows[0]?.t, true);
    const second = await waiting(like, first); // the retry, on a new connection
    assert.notEqual(second, first);
    assert.equal(await visible(), false, "the killed attempt left something visible");
  } finally {
    await lock.query("COMMIT").catch(() => undefined);
    await lock.end();
  }
  return pending;
}

const count = async (text: string, params: unknown[]) =>
  Number((await look.query<{ n: string }>(text, params)).rows[0]?.n ?? 0);

test("an object upload killed while its rows are written: nothing visible, the retry stores it once, whole", async () => {
  const big = new Uint8Array(2 * (1 << 20) + 99).map((_, i) => (i * 7) >>> 3);
  const a = digestBytes(big);
  const stored = await killedOnce(
    "sbx_objects",
    "INSERT INTO sbx_objects",
    () => store.putObject(big),
    async () => (await count("SELECT count(*) AS n FROM sbx_objects WHERE address = $1", [raw(a)])) > 0,
  );
  assert.equal(stored, a);
  assert.equal(await count("SELECT count(*) AS n FROM sbx_object_chunks WHERE address = $1", [raw(a)]), 3);
  assert.deepEqual(await store.getObject(a), big);

  // One chunk or less: one statement (its chunk, object row and list together).
  const small = utf8("a small object, killed once");
  const s = await killedOnce(
    "sbx_objects",
    "WITH c AS (INSERT INTO sbx_chunks",
    () => store.putObject(small),
    async () =>
      (await count("SELECT count(*) AS n FROM sbx_chunks WHERE address = $1", [raw(digestBytes(small))])) > 0,
  );
  assert.deepEqual(await store.getObject(s), small);
});

test("a log append killed in its transaction: nothing visible (not even the log's row), the retry appends once", async () => {
  const name = "terminate/log";
  const head = await killedOnce(
    "sbx_log_entries",
    "INSERT INTO sbx_log_entries",
    () => store.logs.appendLog(name, LOG_GENESIS, utf8("once")),
    async () =>
      (await count("SELECT count(*) AS n FROM sbx_logs WHERE name = $1", [name])) +
        (await count("SELECT count(*) AS n FROM sbx_log_entries WHERE log = $1", [name])) >
      0,
  );
  const log = await store.logs.readLog(name);
  assert.deepEqual(
    log.entries.map((e) => e.head),
    [head],
  );
  // update (the spend path: the log's row locked, read, built and appended in one transaction).
  const r = await killedOnce(
    "sbx_log_entries",
    "INSERT INTO sbx_log_entries",
    () => store.logs.update(name, (s) => ({ payload: utf8(`after ${String(s.entries.length)}`), result: 7 })),
    async () => (await count("SELECT count(*) AS n FROM sbx_log_entries WHERE log = $1", [name])) > 1,
  );
  assert.equal(r, 7);
  assert.deepEqual(
    (await store.logs.readLog(name)).entries.map((e) => new TextDecoder().decode(e.payload)),
    ["once", "after 1"],
  );
});

test("a segment append killed mid-insert: nothing visible, the retry appends once", async () => {
  const id = await store.createRecord(d("terminate unit"), d("g"));
  const h1 = await killedOnce(
    "sbx_segments",
    "INSERT INTO sbx_segments",
    () => store.appendSegment(id, id, { kind: "executed", attestation: d("once") }),
    async () => (await count("SELECT count(*) AS n FROM sbx_segments WHERE record = $1", [raw(id)])) > 0,
  );
  const fresh = await PgStore.open(db.url);
  try {
    assert.deepEqual((await readRun(fresh, id)).heads, [id, h1]);
  } finally {
    await fresh.close();
  }
});

test("a record import killed after its header row, before its segment rows: nothing visible, the retry imports it whole", async () => {
  const unit = d("terminate import");
  const grants = d("g");
  const id = runGenesis(unit, grants);
  const segs = [d("i1"), d("i2")].map((attestation) => ({ kind: "executed" as const, attestation }));
  const heads: Digest[] = [id];
  for (const s of segs) heads.push(segmentHead(heads.at(-1)!, s));
  const bytes = Buffer.concat([
    encodeHeader(unit, grants),
    ...segs.map((s, i) => encodeSegmentLine(i + 1, heads[i + 1]!, s)),
  ]);
  const done = await killedOnce(
    "sbx_segments",
    "INSERT INTO sbx_segments",
    () => importRecord(store, bytes),
    async () => (await count("SELECT count(*) AS n FROM sbx_records WHERE id = $1", [raw(id)])) > 0,
  );
  assert.deepEqual(done, { created: true, added: 2 });
  const fresh = await PgStore.open(db.url);
  try {
    assert.deepEqual(await fresh.readRecordBytes(id), new Uint8Array(bytes));
  } finally {
    await fresh.close();
  }
});
