// Rows altered by hand in the database (§13.7): readers verify what they read, so an edited segment,
// head column, log entry, chunk or envelope is refused with a code, never trusted for coming from
// the store — and a writer will not append on top of it.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { canonicalBytes, digestBytes, parseDigest, signPayload, testKey, utf8, type Digest } from "@sbx/wire";
import { isSandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { openSigned, readRun } from "@sbx/sandbox-attest/store";
import { isHostError } from "../../src/errors.ts";
import { LOG_GENESIS } from "../../src/log/index.ts";
import { PgStore } from "../../src/pg/index.ts";
import { FULL_CHECK_EVERY } from "../../src/pg/reader.ts";
import { sql, testDb, type TestDb } from "./pgtest.ts";

const d = (s: string): Digest => digestBytes(utf8(s));
const raw = (a: Digest) => Buffer.from(parseDigest(a));
const code = (c: string) => (e: unknown) =>
  (isSandboxAttestError(e) || isHostError(e) || (e as { code?: unknown }).code !== undefined) &&
  (e as { code: string }).code === c;

let db: TestDb;
let store: PgStore;
before(async () => {
  db = await testDb();
  store = await PgStore.open(db.url);
});
after(async () => {
  await store.close();
  await db.done();
});

async function threeSegments(tag: string): Promise<{ id: Digest; heads: Digest[] }> {
  const id = await store.createRecord(d(tag), d("g"));
  const heads = [id];
  for (const n of ["a", "b", "c"])
    heads.push(await store.appendSegment(id, heads.at(-1)!, { kind: "executed", attestation: d(n) }));
  return { id, heads };
}

test("a segment line edited in the database: HeadMismatch on read and on another host's append", async () => {
  const { id, heads } = await threeSegments("edit line");
  const r = await sql(db.url, "SELECT line FROM sbx_segments WHERE record = $1 AND seq = 2", [raw(id)]);
  const line = (r.rows[0] as { line: Buffer }).line.toString().replace(d("b").slice(7), d("B").slice(7));
  await sql(db.url, "UPDATE sbx_segments SET line = $2 WHERE record = $1 AND seq = 2", [
    raw(id),
    Buffer.from(line),
  ]);
  await assert.rejects(readRun(store, id), code("HeadMismatch"));
  // Another host (no verified copy of this record yet) will not append on top of it.
  const other = await PgStore.open(db.url);
  try {
    await assert.rejects(
      other.appendSegment(id, heads[3]!, { kind: "executed", attestation: d("d") }),
      code("HeadMismatch"),
    );
  } finally {
    await other.close();
  }
});

test("a head column edited (the line untouched): StoreCorrupt", async () => {
  const { id } = await threeSegments("edit head");
  await sql(db.url, "UPDATE sbx_segments SET head = $2 WHERE record = $1 AND seq = 3", [
    raw(id),
    raw(d("x")),
  ]);
  await assert.rejects(readRun(store, id), code("StoreCorrupt"));
});

test("a segment row deleted from the middle: refused (BadRecord), not read as a shorter run", async () => {
  const { id } = await threeSegments("delete row");
  await sql(db.url, "DELETE FROM sbx_segments WHERE record = $1 AND seq = 2", [raw(id)]);
  await assert.rejects(readRun(store, id), code("BadRecord"));
});

test("a header swapped for another run's: HeadMismatch with segments, GenesisMismatch without", async () => {
  const { id } = await threeSegments("swap header");
  const other = await store.createRecord(d("other unit"), d("g"));
  await sql(
    db.url,
    "UPDATE sbx_records SET header = (SELECT header FROM sbx_records WHERE id = $2) WHERE id = $1",
    [raw(id), raw(other)],
  );
  await assert.rejects(readRun(store, id), code("HeadMismatch"));
  const empty = await store.createRecord(d("empty run"), d("g"));
  await sql(
    db.url,
    "UPDATE sbx_records SET header = (SELECT header FROM sbx_records WHERE id = $2) WHERE id = $1",
    [raw(empty), raw(other)],
  );
  await assert.rejects(readRun(store, empty), code("GenesisMismatch"));
});

test("a ledger entry's payload edited: LogBroken", async () => {
  let h = LOG_GENESIS;
  for (const p of ["1", "2", "3"]) h = await store.logs.appendLog("tamper/ledger", h, utf8(p));
  await sql(db.url, "UPDATE sbx_log_entries SET payload = 'X' WHERE log = 'tamper/ledger' AND seq = 2");
  await assert.rejects(store.logs.readLog("tamper/ledger"), code("LogBroken"));
  await assert.rejects(store.logs.appendLog("tamper/ledger", h, utf8("4")), code("LogBroken"));
});

test("an object's chunk edited: ObjectMismatch; a chunk deleted: StoreCorrupt", async () => {
  const a = await store.putObject(utf8("object to tamper with"));
  await sql(db.url, "UPDATE sbx_chunks SET data = 'forged' WHERE address = $1", [raw(a)]);
  await assert.rejects(store.getObject(a), code("ObjectMismatch"));
  const b = await store.putObject(utf8("object to lose"));
  await sql(db.url, "DELETE FROM sbx_object_chunks WHERE address = $1", [raw(b)]);
  await assert.rejects(store.getObject(b), code("StoreCorrupt"));
});

test("a signed object's envelope edited: refused when opened (the signature no longer covers it)", async () => {
  const env = signPayload("application/vnd.test+json", { v: 1 }, testKey("host"));
  const a = await store.putSigned(env);
  const forged = { ...env, payload: Buffer.from('{"v":2}').toString("base64") };
  await sql(db.url, "UPDATE sbx_signed SET envelope = $2 WHERE address = $1", [
    raw(a),
    Buffer.from(canonicalBytes(forged)),
  ]);
  const back = await store.getSigned(a);
  assert.throws(() => openSigned(a, back, "application/vnd.test+json"), code("BadSignature"));
});

// The warm path (reader.ts): a reader that already verified the record reads only the new rows, and
// checks the rows it verified by the server's digest over them — an edit there is still refused.
test("a reader that verified the record before: an edited old line or head column, a forged new row, a rewritten history are refused", async () => {
  const { id, heads } = await threeSegments("warm edit line");
  assert.equal((await readRun(store, id)).head, heads[3]); // verified and held by this reader
  const r = await sql(db.url, "SELECT line FROM sbx_segments WHERE record = $1 AND seq = 2", [raw(id)]);
  const line = (r.rows[0] as { line: Buffer }).line.toString().replace(d("b").slice(7), d("B").slice(7));
  await sql(db.url, "UPDATE sbx_segments SET line = $2 WHERE record = $1 AND seq = 2", [
    raw(id),
    Buffer.from(line),
  ]);
  await assert.rejects(readRun(store, id), code("HeadMismatch"));
  await assert.rejects(store.readRecordBytes(id), code("HeadMismatch"));

  const h = await threeSegments("warm edit head");
  await readRun(store, h.id);
  await sql(db.url, "UPDATE sbx_segments SET head = $2 WHERE record = $1 AND seq = 1", [
    raw(h.id),
    raw(d("x")),
  ]);
  await assert.rejects(readRun(store, h.id), code("StoreCorrupt"));

  // A new row appended by hand whose line does not hash to its stated head: refused by the decoder.
  const n = await threeSegments("warm forged row");
  await readRun(store, n.id);
  const other = await PgStore.open(db.url);
  try {
    const h4 = await other.appendSegment(n.id, n.heads[3]!, { kind: "executed", attestation: d("d") });
    assert.equal((await readRun(store, n.id)).head, h4); // the new row verified from the held head
    const l5 = Buffer.from(
      `{"head":"${d("not the head")}","n":5,"segment":{"attestation":"${d("e")}","kind":"executed"}}\n`,
    );
    await sql(
      db.url,
      "INSERT INTO sbx_segments (record, seq, prev, head, line, token) VALUES ($1, 5, $2, $3, $4, gen_random_uuid())",
      [raw(n.id), raw(h4), raw(d("not the head")), l5],
    );
    await assert.rejects(readRun(store, n.id), code("HeadMismatch"));
  } finally {
    await other.close();
  }

  // Every row replaced by another valid chain (same record, other segments): the held prefix no
  // longer matches, the record now verifies from genesis to something else — StoreCorrupt.
  const w = await threeSegments("warm rewrite");
  await readRun(store, w.id);
  await sql(db.url, "DELETE FROM sbx_segments WHERE record = $1", [raw(w.id)]);
  const fresh = await PgStore.open(db.url);
  try {
    await fresh.appendSegment(w.id, w.id, { kind: "executed", attestation: d("z") });
    assert.equal((await readRun(fresh, w.id)).segments.length, 1); // a fresh reader sees a valid run
  } finally {
    await fresh.close();
  }
  await assert.rejects(readRun(store, w.id), code("StoreCorrupt"));
  await assert.rejects(readRun(store, w.id), code("StoreCorrupt")); // and keeps refusing it
});

// What a warm read guarantees about rows it already verified (reader.ts, §13.7.1): the header and
// the last held row are checked on every read; every held row on the first warm read after a
// verification from genesis, on every FULL_CHECK_EVERY-th warm read and on a read asked `full`. An
// older row edited in between is therefore refused at the latest FULL_CHECK_EVERY reads later —
// and, until then, this reader returns the rows as it verified them (never the edited bytes).
test("warm reads: the last held row and the header are checked on every read, older rows every FULL_CHECK_EVERY reads or when asked", async () => {
  const reader = await PgStore.open(db.url);
  try {
    const old = await threeSegments("warm bound older row");
    const first = await reader.readRecordBytes(old.id); // from genesis
    await reader.readRecordBytes(old.id); // the first warm read: full, resets the count
    const r = await sql(db.url, "SELECT line FROM sbx_segments WHERE record = $1 AND seq = 1", [raw(old.id)]);
    const line = (r.rows[0] as { line: Buffer }).line.toString().replace(d("a").slice(7), d("A").slice(7));
    await sql(db.url, "UPDATE sbx_segments SET line = $2 WHERE record = $1 AND seq = 1", [
      raw(old.id),
      Buffer.from(line),
    ]);
    for (let i = 1; i < FULL_CHECK_EVERY; i++)
      assert.deepEqual(
        await reader.readRecordBytes(old.id),
        first,
        `spot read ${String(i)} returns the held rows`,
      );
    await assert.rejects(reader.readRecordBytes(old.id), code("HeadMismatch")); // the FULL_CHECK_EVERY-th
    await assert.rejects(reader.readRecordBytes(old.id), code("HeadMismatch")); // and it keeps refusing

    // Asked in full: the same edit is refused on that read.
    const asked = await threeSegments("warm bound asked");
    await reader.readRecordBytes(asked.id);
    await reader.readRecordBytes(asked.id);
    await sql(db.url, "UPDATE sbx_segments SET head = $2 WHERE record = $1 AND seq = 2", [
      raw(asked.id),
      raw(d("x")),
    ]);
    assert.notEqual(await reader.readRecordBytes(asked.id), null); // a spot read does not look at row 2
    await assert.rejects(reader.readRecordBytes(asked.id, { full: true }), code("StoreCorrupt"));

    // The last held row, or the header, edited: refused on the very next (spot) read.
    const last = await threeSegments("warm bound last row");
    await reader.readRecordBytes(last.id);
    await reader.readRecordBytes(last.id);
    await sql(db.url, "UPDATE sbx_segments SET head = $2 WHERE record = $1 AND seq = 3", [
      raw(last.id),
      raw(d("x")),
    ]);
    await assert.rejects(reader.readRecordBytes(last.id), code("StoreCorrupt"));

    const hdr = await threeSegments("warm bound header");
    const other = await reader.createRecord(d("warm bound other"), d("g"));
    await reader.readRecordBytes(hdr.id);
    await reader.readRecordBytes(hdr.id);
    await sql(
      db.url,
      "UPDATE sbx_records SET header = (SELECT header FROM sbx_records WHERE id = $2) WHERE id = $1",
      [raw(hdr.id), raw(other)],
    );
    await assert.rejects(reader.readRecordBytes(hdr.id), code("HeadMismatch"));

    // The last held row deleted (a history cut back or rewritten from any point): refused at once.
    const cut = await threeSegments("warm bound cut");
    await reader.readRecordBytes(cut.id);
    await reader.readRecordBytes(cut.id);
    await sql(db.url, "DELETE FROM sbx_segments WHERE record = $1 AND seq = 3", [raw(cut.id)]);
    await assert.rejects(reader.readRecordBytes(cut.id), code("StoreCorrupt"));
  } finally {
    await reader.close();
  }
});

test("a segment row whose line holds two lines: StoreCorrupt, not read as a longer run", async () => {
  const { id } = await threeSegments("two lines in one row");
  const r = await sql(db.url, "SELECT seq, line FROM sbx_segments WHERE record = $1 ORDER BY seq", [raw(id)]);
  const lines = r.rows as { line: Buffer }[];
  await sql(db.url, "UPDATE sbx_segments SET line = $2 WHERE record = $1 AND seq = 2", [
    raw(id),
    Buffer.concat([lines[1]!.line, lines[2]!.line]),
  ]);
  await sql(db.url, "DELETE FROM sbx_segments WHERE record = $1 AND seq = 3", [raw(id)]);
  const fresh = await PgStore.open(db.url);
  try {
    await assert.rejects(readRun(fresh, id), code("StoreCorrupt"));
  } finally {
    await fresh.close();
  }
});

test("an upload naming another address is refused (ObjectMismatch), small or chunked, and nothing is recorded", async () => {
  async function* bytes(n: number): AsyncGenerator<Uint8Array> {
    await Promise.resolve();
    yield new Uint8Array(n).fill(7);
  }
  const wrong = d("not these bytes");
  await assert.rejects(store.putObjectStream(bytes(100), wrong), code("ObjectMismatch"));
  await assert.rejects(store.putObjectStream(bytes((1 << 20) + 5), wrong), code("ObjectMismatch"));
  assert.equal(await store.hasObject(wrong), false);
  assert.equal(await store.hasObject(digestBytes(new Uint8Array(100).fill(7))), false);
  const big = await store.putObjectStream(bytes((1 << 20) + 5));
  assert.equal(big.size, (1 << 20) + 5);
  // A small object equal to the big one's first chunk shares that chunk row.
  const small = await store.putObject(new Uint8Array(1 << 20).fill(7));
  assert.deepEqual(await store.getObject(small), new Uint8Array(1 << 20).fill(7));
  assert.equal((await store.getObject(big.address))?.length, (1 << 20) + 5);
});

test("a ledger this store already verified: an old entry edited is still LogBroken; new entries verify from the held head", async () => {
  let h = LOG_GENESIS;
  for (const p of ["1", "2", "3"]) h = await store.logs.appendLog("tamper/held", h, utf8(p));
  assert.equal((await store.logs.readLog("tamper/held")).head, h); // held by this store now
  const other = await PgStore.open(db.url);
  try {
    const h4 = await other.logs.appendLog("tamper/held", h, utf8("4"));
    const s = await store.logs.readLog("tamper/held");
    assert.deepEqual([s.head, s.entries.length], [h4, 4]);
    await sql(db.url, "UPDATE sbx_log_entries SET payload = 'X' WHERE log = 'tamper/held' AND seq = 1");
    await assert.rejects(store.logs.readLog("tamper/held"), code("LogBroken"));
    await assert.rejects(store.logs.appendLog("tamper/held", h4, utf8("5")), code("LogBroken"));
    await assert.rejects(
      store.logs.update("tamper/held", () => ({ payload: utf8("5"), result: 1 })),
      code("LogBroken"),
    );
    // Every entry replaced by another valid chain: a fresh reader reads it, this store refuses it.
    await sql(db.url, "DELETE FROM sbx_log_entries WHERE log = 'tamper/held'");
    const fresh = await PgStore.open(db.url);
    try {
      await fresh.logs.appendLog("tamper/held", LOG_GENESIS, utf8("other"));
      assert.equal((await fresh.logs.readLog("tamper/held")).entries.length, 1);
    } finally {
      await fresh.close();
    }
    await assert.rejects(store.logs.readLog("tamper/held"), code("LogBroken"));
    await assert.rejects(other.logs.readLog("tamper/held"), code("LogBroken"));
  } finally {
    await other.close();
  }
});

// The digests a warm read compares frame every part (reader.ts): the header, and each row's prev,
// head and line, enter as length then bytes. Unframed, bytes moved across a boundary (the same bytes
// joined, split otherwise) hashed alike, so these shifts went unnoticed by a reader holding the record.
test("bytes shifted between the header, a row's columns and the next row: refused on the next warm read, full or spot", async () => {
  const reader = await PgStore.open(db.url);
  try {
    const rowOf = async (id: Digest, seq: number) =>
      (
        await sql(db.url, "SELECT prev, head FROM sbx_segments WHERE record = $1 AND seq = $2", [
          raw(id),
          seq,
        ])
      ).rows[0] as { prev: Buffer; head: Buffer };
    const held = async (tag: string) => {
      const r = await threeSegments(tag);
      assert.notEqual(await reader.readRecordBytes(r.id), null); // from genesis
      assert.notEqual(await reader.readRecordBytes(r.id), null); // the first warm read: full
      return r;
    };

    // The last row's prev/head boundary moved by 4 bytes: a spot read refuses it.
    const a = await held("shift prev head");
    const r3 = await rowOf(a.id, 3);
    await sql(db.url, "UPDATE sbx_segments SET prev = $2, head = $3 WHERE record = $1 AND seq = 3", [
      raw(a.id),
      Buffer.concat([r3.prev, r3.head.subarray(0, 4)]),
      r3.head.subarray(4),
    ]);
    await assert.rejects(reader.readRecordBytes(a.id), code("StoreCorrupt"));

    // 4 bytes of the last row's prev moved onto the end of the header row: a spot read refuses it.
    const b = await held("shift header prev");
    const b3 = await rowOf(b.id, 3);
    await sql(db.url, "UPDATE sbx_records SET header = header || $2 WHERE id = $1", [
      raw(b.id),
      b3.prev.subarray(0, 4),
    ]);
    await sql(db.url, "UPDATE sbx_segments SET prev = $2 WHERE record = $1 AND seq = 3", [
      raw(b.id),
      b3.prev.subarray(4),
    ]);
    await assert.rejects(reader.readRecordBytes(b.id), code("BadRecord"));

    // An older row's boundary moved (row 1's head into its prev): a spot read does not look at row 1,
    // a full read refuses it.
    const c = await held("shift older row");
    const c1 = await rowOf(c.id, 1);
    await sql(db.url, "UPDATE sbx_segments SET prev = $2, head = $3 WHERE record = $1 AND seq = 1", [
      raw(c.id),
      Buffer.concat([c1.prev, c1.head.subarray(0, 4)]),
      c1.head.subarray(4),
    ]);
    assert.notEqual(await reader.readRecordBytes(c.id), null);
    await assert.rejects(reader.readRecordBytes(c.id, { full: true }), code("StoreCorrupt"));
  } finally {
    await reader.close();
  }
});

// A fresh reader (from genesis) reads the header row and every line row joined; each row must hold
// exactly its own line, so the same bytes split across rows otherwise are not taken for the record.
test("line bytes moved across rows (the record's bytes unchanged): StoreCorrupt from genesis", async () => {
  const lineOf = async (id: Digest, seq: number) =>
    (
      (await sql(db.url, "SELECT line FROM sbx_segments WHERE record = $1 AND seq = $2", [raw(id), seq]))
        .rows[0] as { line: Buffer }
    ).line;
  const fresh = await PgStore.open(db.url);
  try {
    // The header row's line feed moved to the front of row 1's line.
    const h = await threeSegments("header lf moved");
    await sql(
      db.url,
      "UPDATE sbx_records SET header = substring(header from 1 for length(header) - 1) WHERE id = $1",
      [raw(h.id)],
    );
    await sql(db.url, "UPDATE sbx_segments SET line = '\\x0a'::bytea || line WHERE record = $1 AND seq = 1", [
      raw(h.id),
    ]);
    await assert.rejects(fresh.readRecordBytes(h.id), code("StoreCorrupt"));

    // The first 3 bytes of line 2 moved onto the end of row 1's line.
    const m = await threeSegments("line bytes moved");
    const l2 = await lineOf(m.id, 2);
    await sql(db.url, "UPDATE sbx_segments SET line = line || $2 WHERE record = $1 AND seq = 1", [
      raw(m.id),
      l2.subarray(0, 3),
    ]);
    await sql(db.url, "UPDATE sbx_segments SET line = $2 WHERE record = $1 AND seq = 2", [
      raw(m.id),
      l2.subarray(3),
    ]);
    await assert.rejects(fresh.readRecordBytes(m.id), code("StoreCorrupt"));
    // A reader that verified it before the move refuses it too, on its next full read.
    const w = await threeSegments("line bytes moved, held");
    await fresh.readRecordBytes(w.id);
    const w2 = await lineOf(w.id, 2);
    await sql(db.url, "UPDATE sbx_segments SET line = line || $2 WHERE record = $1 AND seq = 1", [
      raw(w.id),
      w2.subarray(0, 3),
    ]);
    await sql(db.url, "UPDATE sbx_segments SET line = $2 WHERE record = $1 AND seq = 2", [
      raw(w.id),
      w2.subarray(3),
    ]);
    await assert.rejects(fresh.readRecordBytes(w.id, { full: true }), code("StoreCorrupt"));
  } finally {
    await fresh.close();
  }
});

// The ledger's held-prefix digest (pglog.ts) frames prev, head and payload the same way: bytes moved
// from one entry's payload into the next entry's prev joined to the same bytes and were not noticed
// by a store holding the log. A column of the wrong length is LogBroken / StoreCorrupt, not a crash.
test("a held ledger with bytes moved from a payload into the next entry's prev: LogBroken", async () => {
  let h = LOG_GENESIS;
  for (const p of ["first payload", "second payload", "third payload"])
    h = await store.logs.appendLog("tamper/shift", h, utf8(p));
  assert.equal((await store.logs.readLog("tamper/shift")).head, h); // held by this store now
  const r = await sql(db.url, "SELECT prev FROM sbx_log_entries WHERE log = 'tamper/shift' AND seq = 3");
  const prev3 = (r.rows[0] as { prev: Buffer }).prev;
  await sql(
    db.url,
    "UPDATE sbx_log_entries SET payload = payload || $1 WHERE log = 'tamper/shift' AND seq = 2",
    [prev3.subarray(0, 4)],
  );
  await sql(db.url, "UPDATE sbx_log_entries SET prev = $1 WHERE log = 'tamper/shift' AND seq = 3", [
    prev3.subarray(4),
  ]);
  await assert.rejects(store.logs.readLog("tamper/shift"), code("LogBroken"));
  const fresh = await PgStore.open(db.url);
  try {
    await assert.rejects(fresh.logs.readLog("tamper/shift"), code("LogBroken"));
  } finally {
    await fresh.close();
  }
});

test("a segment's prev column cut short: StoreCorrupt for a reader and for a writer, not a crash", async () => {
  const { id, heads } = await threeSegments("short prev");
  await sql(
    db.url,
    "UPDATE sbx_segments SET prev = substring(prev from 1 for 28) WHERE record = $1 AND seq = 3",
    [raw(id)],
  );
  const fresh = await PgStore.open(db.url);
  try {
    await assert.rejects(fresh.readRecordBytes(id), code("StoreCorrupt"));
    await assert.rejects(
      fresh.appendSegment(id, heads[3]!, { kind: "executed", attestation: d("d") }),
      code("StoreCorrupt"),
    );
  } finally {
    await fresh.close();
  }
});
