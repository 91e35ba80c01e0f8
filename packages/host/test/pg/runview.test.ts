// Runs verified straight from PostgreSQL (runview.ts: verifyPgRun), against the file store's
// verification of the same run: a run whose snapshot holds a file of three chunks and nested
// directories gives the same report from both stores; a chunk of the large file altered, a chunk row
// taken away and a nested directory taken away in the database each give the code the file store
// gives for the same damage (or the store's StoreCorrupt where a file store has no chunks), and a
// verification never reports VALID over an object it did not read whole.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { addressOf, canonicalBytes, digestBytes, parseDigest, testKey, utf8, type Digest } from "@sbx/wire";
import { signAttestation } from "@sbx/sandbox-attest/attestation";
import { parseFsDir } from "@sbx/sandbox-attest/runrecord";
import { FileStore, reportOf, verifyRunFile } from "../../src/store/index.ts";
import { snapshotDir } from "../../src/snapshot/index.ts";
import { copyStore, PgStore, verifyPgRun, CHUNK_BYTES } from "../../src/pg/index.ts";
import { sql, testDb, type TestDb } from "./pgtest.ts";

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

const UNIT_DESCRIPTOR = { runview: "unit" };
const UNIT = addressOf(UNIT_DESCRIPTOR);
const GRANTS = digestBytes(utf8("runview-grants"));
const HOSTS = [testKey("host").did];

async function makeRun(dir: string) {
  const store = FileStore.open(join(dir, "store"), { create: true });
  const ws = join(dir, "ws");
  mkdirSync(join(ws, "a", "b", "c"), { recursive: true });
  const big = randomBytes(2 * CHUNK_BYTES + 12345);
  writeFileSync(join(ws, "a", "b", "big.bin"), big);
  writeFileSync(join(ws, "a", "b", "c", "deep.txt"), "deep\n");
  writeFileSync(join(ws, "top.txt"), "top\n");
  const manifest = await store.putObject(canonicalBytes({ image: "debian@sha256:" + "1".repeat(64) }));
  const fsRoot = snapshotDir(store, ws).fs_root;
  const id = await store.createRecord(UNIT, GRANTS);
  const receipt = await store.putObject(canonicalBytes({ receipt: "runview", total_uj: "1000" }));
  const att = await store.putSigned(
    signAttestation(
      {
        unit_id: UNIT,
        grants_id: GRANTS,
        manifest,
        exec_policy: digestBytes(utf8("policy")),
        energy: { receipt, total_uj: "1000", provenance: "estimated" },
        journal: { root: digestBytes(utf8("journal")), events: 1 },
        outcome: { status: "exited", exit_code: 0 },
        interval: { start_ms: 1, end_ms: 2 },
        level: "S5",
        run_head: id,
      },
      testKey("host"),
      UNIT_DESCRIPTOR,
    ),
  );
  const head = await store.appendSegment(id, id, { kind: "executed", attestation: att });
  await store.appendSegment(id, head, {
    kind: "suspended",
    snapshot: { fs_root: fsRoot, manifest },
    at_ms: 3,
  });
  return { store, id, fsRoot, big: digestBytes(big) };
}

/** dirOf finds the directory object at `path` under `root` in a file store. */
function dirOf(store: FileStore, root: Digest, path: string[]): Digest {
  let at = root;
  for (const name of path)
    at = parseFsDir(store.getObjectSync(at)!).entries.find((e) => e.name === name)!.digest;
  return at;
}

test("verifyPgRun gives the file store's report and codes, reading the database directly", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-runview-"));
  const pg = await PgStore.open(db.url);
  try {
    const run = await makeRun(dir);
    await copyStore(run.store, pg);
    const fileVerdict = () =>
      reportOf(verifyRunFile(run.store.recordPath(run.id), run.store, { hosts: HOSTS }).run);
    const pgVerdict = async () => {
      pg.forgetVerified();
      return reportOf((await verifyPgRun(pg, run.id, { hosts: HOSTS })).run);
    };
    const intact = await pgVerdict();
    assert.equal(intact.valid, true, JSON.stringify(intact.error));
    assert.deepEqual(intact, fileVerdict());
    const first = await verifyPgRun(pg, run.id, { hosts: HOSTS });
    assert.ok(first.fetchedBytes > 2 * CHUNK_BYTES, "the large file was read whole to be hashed");

    const big = Buffer.from(parseDigest(run.big));
    const chunk1 = (
      await sql(db.url, "SELECT chunk FROM sbx_object_chunks WHERE address = $1 AND seq = 1", [big])
    ).rows[0] as { chunk: Buffer };
    const data = (await sql(db.url, "SELECT data FROM sbx_chunks WHERE address = $1", [chunk1.chunk]))
      .rows[0] as {
      data: Buffer;
    };
    // A byte of the large file's second chunk: ObjectMismatch, as a byte changed in the file store's copy.
    const flipped = Buffer.from(data.data);
    flipped[100] = flipped[100]! ^ 0x01;
    await sql(db.url, "UPDATE sbx_chunks SET data = $2 WHERE address = $1", [chunk1.chunk, flipped]);
    const changed = await pgVerdict();
    assert.deepEqual([changed.valid, changed.error?.code], [false, "ObjectMismatch"]);
    const copy = join(dir, "copy");
    cpSync(run.store.root, copy, { recursive: true });
    const fs2 = FileStore.open(copy);
    const p = fs2.objectPath(run.big);
    const bytes = Buffer.from(fs2.getObjectSync(run.big)!);
    bytes[CHUNK_BYTES + 100] = bytes[CHUNK_BYTES + 100]! ^ 0x01;
    chmodSync(p, 0o644);
    writeFileSync(p, bytes);
    const fileChanged = reportOf(verifyRunFile(fs2.recordPath(run.id), fs2, { hosts: HOSTS }).run);
    assert.equal(fileChanged.error?.code, changed.error?.code, "the file store's code for the same change");
    await sql(db.url, "UPDATE sbx_chunks SET data = $2 WHERE address = $1", [chunk1.chunk, data.data]);
    assert.equal((await pgVerdict()).valid, true);

    // The large file's second chunk row taken away: the store's StoreCorrupt, never VALID.
    await sql(db.url, "DELETE FROM sbx_object_chunks WHERE address = $1 AND seq = 1", [big]);
    const gone = await pgVerdict();
    assert.deepEqual([gone.valid, gone.error?.code], [false, "StoreCorrupt"]);
    await sql(db.url, "INSERT INTO sbx_object_chunks (address, seq, chunk) VALUES ($1, 1, $2)", [
      big,
      chunk1.chunk,
    ]);

    // A nested directory taken away: the code the file store gives without it.
    const c = dirOf(run.store, run.fsRoot, ["a", "b", "c"]);
    const raw = Buffer.from(parseDigest(c));
    await sql(db.url, "DELETE FROM sbx_object_chunks WHERE address = $1", [raw]);
    await sql(db.url, "DELETE FROM sbx_objects WHERE address = $1", [raw]);
    const noDir = await pgVerdict();
    const copy2 = join(dir, "copy2");
    cpSync(run.store.root, copy2, { recursive: true });
    const fs3 = FileStore.open(copy2);
    rmSync(fs3.objectPath(c));
    const fileNoDir = reportOf(verifyRunFile(fs3.recordPath(run.id), fs3, { hosts: HOSTS }).run);
    assert.equal(noDir.valid, false);
    assert.deepEqual(noDir, fileNoDir);
  } finally {
    await pg.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
