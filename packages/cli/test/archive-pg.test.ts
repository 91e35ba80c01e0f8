// `sbx import` into PostgreSQL is atomic (archive-pg.ts, host/src/pg/importrecord.ts): the record's
// header and every segment row are written in one transaction, so a reader polling while an import
// runs sees the record absent or whole, a process SIGKILLed at any write step leaves it absent or
// whole, a retry then imports it, and a record that is not a prefix of the archive's is refused
// with nothing written.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bytesEqual, digestBytes, parseDigest, testKey, utf8, type Digest } from "@sbx/wire";
import { decodeRecord, isSandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { openRunArchive } from "@sbx/host/archive";
import { PgStore } from "@sbx/host/pg";
import { sql, testDb, type TestDb } from "../../host/test/pg/pgtest.ts";
import { fixtureRun } from "../../host/test/store/fixture-run.ts";
import { runCli } from "../src/main.ts";
import { importIntoShared } from "../src/commands/sbx/archive-pg.ts";

const HOST = testKey("host").did;
const raw = (a: Digest) => Buffer.from(parseDigest(a));

let db: TestDb;
let archive: string;
let id: Digest;
let whole: Uint8Array;
let segments: number;
before(async () => {
  db = await testDb();
  const run = await fixtureRun();
  id = run.store.recordIds()[0]!;
  archive = join(mkdtempSync(join(tmpdir(), "sbx-arpg-")), "run.tar");
  const code = await runCli("sbx", ["export", id, "--store", run.store.root, "--out", archive], {
    out: () => undefined,
    err: () => undefined,
  });
  assert.equal(code, 0);
  whole = openRunArchive(readFileSync(archive), [HOST]).record;
  segments = whole.filter((b) => b === 0x0a).length - 1;
  assert.ok(segments >= 5, "the fixture run has several segments");
});
after(async () => {
  await db.done();
});

async function wipe(): Promise<void> {
  await sql(
    db.url,
    "TRUNCATE sbx_segments, sbx_records, sbx_object_chunks, sbx_objects, sbx_chunks, sbx_signed",
  );
}

/** What a reader that holds nothing sees of the record, and how many segment rows the database has. */
async function seen(): Promise<{ bytes: Uint8Array | null; rows: number }> {
  const s = await PgStore.open(db.url);
  try {
    const r = await sql(db.url, "SELECT count(*)::int AS n FROM sbx_segments WHERE record = $1", [raw(id)]);
    return { bytes: await s.readRecordBytes(id), rows: (r.rows[0] as { n: number }).n };
  } finally {
    await s.close();
  }
}

test("a reader polling during an import sees the record absent or whole, never a part", async () => {
  await wipe();
  const reader = await PgStore.open(db.url, { max: 1 });
  const observed: (Uint8Array | null)[] = [];
  let done = false;
  const poll = (async () => {
    while (!done) {
      reader.forgetVerified(id); // every read from genesis: what a fresh host would see
      observed.push(await reader.readRecordBytes(id));
    }
  })();
  try {
    const r = await importIntoShared(db.url, readFileSync(archive), [HOST]);
    assert.equal(r.created, true);
  } finally {
    done = true;
    await poll;
    await reader.close();
  }
  assert.ok(observed.length >= 3, `the reader read ${String(observed.length)} times during the import`);
  for (const [i, b] of observed.entries())
    assert.ok(
      b === null || bytesEqual(b, whole),
      `read ${String(i)} saw ${String(b?.length)} bytes: a partial record`,
    );
  assert.ok(bytesEqual((await seen()).bytes!, whole));
  // Again: already held, nothing added.
  const again = await importIntoShared(db.url, readFileSync(archive), [HOST]);
  assert.equal(again.created, false);
});

test("a record held as a prefix is continued in one transaction; one that diverges is refused, nothing written", async () => {
  await wipe();
  // A prefix: the header and the first two rows, as a host that had them would hold them.
  const { record } = decodeRecord(whole);
  const s = await PgStore.open(db.url);
  try {
    await s.createRecord(record.unitId, record.grantsId);
    let head = id;
    for (const seg of record.segments.slice(0, 2)) head = await s.appendSegment(id, head, seg);
    const r = await importIntoShared(db.url, readFileSync(archive), [HOST]);
    assert.equal(r.created, true, "rows were added");
    assert.ok(bytesEqual((await seen()).bytes!, whole));

    await wipe();
    const other = await PgStore.open(db.url); // a host that never saw the record
    try {
      await other.createRecord(record.unitId, record.grantsId);
      await other.appendSegment(id, id, { kind: "executed", attestation: digestBytes(utf8("another run")) });
    } finally {
      await other.close();
    }
    // Decided against what the database holds before anything is written: no object, no envelope.
    const count = async (t: string) =>
      ((await sql(db.url, `SELECT count(*)::int AS n FROM ${t}`)).rows[0] as { n: number }).n;
    const before = { objects: await count("sbx_objects"), signed: await count("sbx_signed") };
    await assert.rejects(
      importIntoShared(db.url, readFileSync(archive), [HOST]),
      (e: unknown) => isSandboxAttestError(e) && e.code === "RecordExists",
    );
    assert.equal((await seen()).rows, 1, "nothing was written on the diverged record");
    assert.deepEqual(
      { objects: await count("sbx_objects"), signed: await count("sbx_signed") },
      before,
      "objects were written",
    );
  } finally {
    await s.close();
  }
});

test("import SIGKILLed at every write step: the record is absent or whole, a retry imports it", async () => {
  // The compiled bin (scripts/test.mjs builds it before the tests run).
  const bin = join(import.meta.dirname, "../bin/sbx.mjs");
  const sbxProc = (at: number) =>
    spawnSync(process.execPath, [bin, "import", archive, "--store", db.url, "--trust", HOST], {
      env: { ...process.env, SBX_STORE_CRASH_AT: String(at) },
      encoding: "utf8",
    });
  let killed = 0;
  let midRows = 0;
  for (let at = 1; ; at++) {
    await wipe();
    const p = sbxProc(at);
    if (p.signal !== "SIGKILL") {
      assert.equal(p.status, 0, p.stderr);
      break;
    }
    killed++;
    const v = await seen();
    assert.ok(
      v.bytes === null || bytesEqual(v.bytes, whole),
      `step ${String(at)}: a visible record is not whole`,
    );
    assert.ok(
      v.rows === 0 || v.rows === segments,
      `step ${String(at)}: ${String(v.rows)} of ${String(segments)} rows`,
    );
    if (v.bytes === null && at > 1) midRows++;
    const retry = sbxProc(0);
    assert.equal(retry.status, 0, `step ${String(at)}: retry ${retry.stderr}`);
    assert.ok(bytesEqual((await seen()).bytes!, whole), `step ${String(at)}: the retry imported the record`);
  }
  // Killed between its rows (one step per row, one before COMMIT) as well as while storing objects.
  assert.ok(killed >= segments + 1, `only ${String(killed)} write steps`);
  assert.ok(midRows >= segments, `killed with rows sent but not committed only ${String(midRows)} times`);
});
