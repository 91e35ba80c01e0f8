// A tamper campaign against the PostgreSQL store (§13.7, issue 18): an attacker with write access to
// the database (or a bit flip) alters one thing by SQL — a column of a record's header, of a segment
// row (seq, prev, head, line), of a log entry (seq, prev, head, payload), an object's size or chunk
// count, its chunk list (order, a missing, extra or duplicated chunk) or a chunk's bytes (a flipped
// byte, a truncated last chunk, bytes moved across a chunk boundary), a signed envelope — and every
// reader that reads it must refuse it with a stable code: a fresh reader (from genesis), a warm
// reader holding the state it verified before (at once, or for an older row within the documented
// FULL_CHECK_EVERY reads, returning only the bytes it verified until then), another host's writer,
// the read side (verifyPgRun: `sbx runs/show/verify` on PostgreSQL), object reads and streams, a
// snapshot's restore path (pullTree), and `sbx store copy` from PostgreSQL to a folder. Never the
// altered data as valid, never an uncoded error (TypeError, RangeError…).
//
// One world (a run with a snapshot of nested directories and a file of three chunks, a signed
// attestation, a second record, a ledger of three entries) is built once into a template database;
// each case gets its own copy of it (CREATE DATABASE … TEMPLATE), alters it and reads it.
import { after, before, describe, it, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import {
  addressOf,
  canonicalBytes,
  digestBytes,
  isWireError,
  parseDigest,
  signPayload,
  testKey,
  utf8,
  type Digest,
} from "@sbx/wire";
import { signAttestation } from "@sbx/sandbox-attest/attestation";
import { isSandboxAttestError, parseFsDir } from "@sbx/sandbox-attest/runrecord";
import { openSigned } from "@sbx/sandbox-attest/store";
import { isHostError } from "../../src/errors.ts";
import { LOG_GENESIS } from "../../src/log/index.ts";
import {
  copyStore,
  CHUNK_BYTES,
  logStoreOf,
  PgLogStore,
  PgStore,
  SharedRunStore,
  startCluster,
  stopCluster,
  verifyPgRun,
  type TestCluster,
} from "../../src/pg/index.ts";
import { FULL_CHECK_EVERY } from "../../src/pg/reader.ts";
import { FileStore } from "../../src/store/index.ts";
import { snapshotDir } from "../../src/snapshot/index.ts";
import { withDatabaseName } from "./pgtest.ts";

const d = (s: string): Digest => digestBytes(utf8(s));
const raw = (a: Digest) => Buffer.from(parseDigest(a));
const UNIT_DESCRIPTOR = { campaign: "unit" };
const UNIT = addressOf(UNIT_DESCRIPTOR);
const GRANTS = d("campaign-grants");
const HOSTS = [testKey("host").did];
const LOG = "spend/campaign";
const ATT_TYPE = "application/vnd.in-toto+json";

/** What the world holds, by address, for the cases to name. */
interface World {
  id: Digest;
  other: Digest;
  heads: Digest[];
  bytes: Uint8Array;
  fsRoot: Digest;
  /** a file of three chunks, the last one short */
  big: Digest;
  /** a one-chunk file in a nested directory */
  small: Digest;
  /** the nested directory holding `small` */
  dir: Digest;
  att: Digest;
  logHeads: Digest[];
}

let admin: string;
let cluster: TestCluster | null = null;
let world: World;
let tmp: string;
const made: string[] = [];

async function adminSql(text: string): Promise<void> {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

async function buildWorld(url: string): Promise<World> {
  const files = FileStore.open(join(tmp, "world-store"), { create: true });
  const ws = join(tmp, "world-ws");
  mkdirSync(join(ws, "a", "b"), { recursive: true });
  const big = randomBytes(2 * CHUNK_BYTES + 777);
  writeFileSync(join(ws, "a", "big.bin"), big);
  writeFileSync(join(ws, "a", "b", "small.txt"), "a small file\n");
  writeFileSync(join(ws, "top.txt"), "top\n");
  const manifest = await files.putObject(canonicalBytes({ image: "debian@sha256:" + "2".repeat(64) }));
  const fsRoot = snapshotDir(files, ws).fs_root;
  const id = await files.createRecord(UNIT, GRANTS);
  const receipt = await files.putObject(canonicalBytes({ receipt: "campaign", total_uj: "5" }));
  const att = await files.putSigned(
    signAttestation(
      {
        unit_id: UNIT,
        grants_id: GRANTS,
        manifest,
        exec_policy: d("policy"),
        energy: { receipt, total_uj: "5", provenance: "estimated" },
        journal: { root: d("journal"), events: 1 },
        outcome: { status: "exited", exit_code: 0 },
        interval: { start_ms: 1, end_ms: 2 },
        level: "S5",
        run_head: id,
      },
      testKey("host"),
      UNIT_DESCRIPTOR,
    ),
  );
  const h1 = await files.appendSegment(id, id, { kind: "executed", attestation: att });
  const h2 = await files.appendSegment(id, h1, {
    kind: "suspended",
    snapshot: { fs_root: fsRoot, manifest },
    at_ms: 3,
  });
  const store = await PgStore.open(url);
  try {
    await copyStore(files, store);
    const other = await store.createRecord(d("campaign other unit"), GRANTS);
    let h = LOG_GENESIS;
    const logHeads = [h];
    for (const p of ["one", "two", "three"]) logHeads.push((h = await store.logs.appendLog(LOG, h, utf8(p))));
    const bytes = (await store.readRecordBytes(id))!;
    const dirOf = (root: Digest, name: string) =>
      parseFsDir(files.getObjectSync(root)!).entries.find((e) => e.name === name)!.digest;
    const a = dirOf(fsRoot, "a");
    const b = dirOf(a, "b");
    return {
      id,
      other,
      heads: [id, h1, h2],
      bytes,
      fsRoot,
      big: digestBytes(big),
      small: dirOf(b, "small.txt"),
      dir: b,
      att,
      logHeads,
    };
  } finally {
    await store.close();
  }
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "sbx-campaign-"));
  const shared = process.env["SBX_TEST_PG"];
  if (shared !== undefined && shared !== "") admin = shared;
  else {
    cluster = await startCluster();
    admin = cluster.url;
  }
  const name = `sbx_w_${randomBytes(5).toString("hex")}`;
  await adminSql(`CREATE DATABASE ${name}`);
  made.push(name);
  const url = withDatabaseName(admin, name);
  await PgStore.init(url);
  world = await buildWorld(url);
  template = name;
});
after(async () => {
  try {
    if (cluster !== null) stopCluster(cluster);
    else for (const n of made) await adminSql(`DROP DATABASE IF EXISTS ${n} WITH (FORCE)`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

let template = "";
let caseNo = 0;

/** A fresh copy of the world for one case: its URL and a client to alter it by hand. */
async function copyOfWorld(): Promise<{ url: string; sql: pg.Client; done: () => Promise<void> }> {
  const name = `${template}_${String(++caseNo)}`;
  await adminSql(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  made.push(name);
  const url = withDatabaseName(admin, name);
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  return {
    url,
    sql,
    done: async () => {
      await sql.end();
      // On a shared cluster each copy goes at once; a cluster of our own goes whole at the end.
      if (cluster === null) await adminSql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** A coded refusal: one of the project's error classes, with a string code. */
function codeOf(e: unknown): string {
  if (isHostError(e) || isSandboxAttestError(e) || isWireError(e)) return e.code;
  throw new Error(`an uncoded error: ${String(e)}`, { cause: e });
}

/** refusedWith runs `fn`, which must refuse with a coded error; returns the code. */
async function refusedWith(what: string, fn: () => Promise<unknown>): Promise<string> {
  let got: unknown;
  try {
    got = await fn();
  } catch (e) {
    try {
      return codeOf(e);
    } catch (u) {
      assert.fail(`${what}: ${(u as Error).message}\n${(e as Error).stack ?? ""}`);
    }
  }
  const shown =
    got instanceof Uint8Array
      ? `${String(got.length)} bytes`
      : ((JSON.stringify(got) as string | undefined) ?? "undefined");
  assert.fail(`${what}: not refused, returned ${shown.slice(0, 200)}`);
}

const alterLine = (l: Buffer, i: number) => {
  const b = Buffer.from(l);
  b[i] = b[i]! ^ 0x01;
  return b;
};

// ---- run records

/** A case for a record: what it alters, and whether a warm reader sees it on its very next read. */
interface RecordCase {
  readonly name: string;
  readonly alter: (sql: pg.Client, w: World) => Promise<unknown>;
  /** "next": the header or the last held row is involved; "bound": an older row only */
  readonly warm: "next" | "bound";
}

const seg = (w: World, seq: number) => [raw(w.id), seq];
const RECORD_CASES: RecordCase[] = [
  {
    name: "header: a byte flipped",
    warm: "next",
    alter: (s, w) =>
      s.query(
        "UPDATE sbx_records SET header = set_byte(header, 20, get_byte(header, 20) # 1) WHERE id = $1",
        [raw(w.id)],
      ),
  },
  {
    name: "header: emptied",
    warm: "next",
    alter: (s, w) => s.query("UPDATE sbx_records SET header = ''::bytea WHERE id = $1", [raw(w.id)]),
  },
  {
    name: "header: cut short by one byte (its line feed)",
    warm: "next",
    alter: (s, w) =>
      s.query(
        "UPDATE sbx_records SET header = substring(header from 1 for length(header) - 1) WHERE id = $1",
        [raw(w.id)],
      ),
  },
  {
    name: "header: another run's",
    warm: "next",
    alter: (s, w) =>
      s.query(
        "UPDATE sbx_records SET header = (SELECT header FROM sbx_records WHERE id = $2) WHERE id = $1",
        [raw(w.id), raw(w.other)],
      ),
  },
  {
    name: "header: row 1's line moved into the header row (the record's bytes unchanged)",
    warm: "next",
    alter: async (s, w) => {
      await s.query(
        "UPDATE sbx_records SET header = header || (SELECT line FROM sbx_segments WHERE record = $1 AND seq = 1) WHERE id = $1",
        [raw(w.id)],
      );
      await s.query("DELETE FROM sbx_segments WHERE record = $1 AND seq = 1", [raw(w.id)]);
    },
  },
  {
    name: "segment seq: the last row renumbered",
    warm: "next",
    alter: (s, w) => s.query("UPDATE sbx_segments SET seq = 7 WHERE record = $1 AND seq = $2", seg(w, 2)),
  },
  {
    name: "segment seq: two rows' seq swapped",
    warm: "next",
    alter: async (s, w) => {
      await s.query("UPDATE sbx_segments SET seq = 100 WHERE record = $1 AND seq = 1", [raw(w.id)]);
      await s.query("UPDATE sbx_segments SET seq = 1 WHERE record = $1 AND seq = 2", [raw(w.id)]);
      await s.query("UPDATE sbx_segments SET seq = 2 WHERE record = $1 AND seq = 100", [raw(w.id)]);
    },
  },
  {
    name: "segment prev: the older row's altered",
    warm: "bound",
    alter: (s, w) =>
      s.query("UPDATE sbx_segments SET prev = $3 WHERE record = $1 AND seq = $2", [
        ...seg(w, 1),
        raw(d("x")),
      ]),
  },
  {
    name: "segment prev: 33 bytes (the right digest and one more)",
    warm: "next",
    alter: (s, w) =>
      s.query(
        "UPDATE sbx_segments SET prev = prev || '\\x00'::bytea WHERE record = $1 AND seq = $2",
        seg(w, 2),
      ),
  },
  {
    name: "segment head: the last row's altered",
    warm: "next",
    alter: (s, w) =>
      s.query("UPDATE sbx_segments SET head = $3 WHERE record = $1 AND seq = $2", [
        ...seg(w, 2),
        raw(d("x")),
      ]),
  },
  {
    name: "segment head: emptied",
    warm: "next",
    alter: (s, w) =>
      s.query("UPDATE sbx_segments SET head = ''::bytea WHERE record = $1 AND seq = $2", seg(w, 2)),
  },
  {
    name: "segment head: the older row's altered",
    warm: "bound",
    alter: (s, w) =>
      s.query("UPDATE sbx_segments SET head = $3 WHERE record = $1 AND seq = $2", [
        ...seg(w, 1),
        raw(d("x")),
      ]),
  },
  {
    name: "segment line: a byte flipped in the older row",
    warm: "bound",
    alter: async (s, w) => {
      const r = await s.query<{ line: Buffer }>(
        "SELECT line FROM sbx_segments WHERE record = $1 AND seq = $2",
        seg(w, 1),
      );
      await s.query("UPDATE sbx_segments SET line = $3 WHERE record = $1 AND seq = $2", [
        ...seg(w, 1),
        alterLine(r.rows[0]!.line, 30),
      ]);
    },
  },
  {
    name: "segment line: the last row's emptied",
    warm: "next",
    alter: (s, w) =>
      s.query("UPDATE sbx_segments SET line = ''::bytea WHERE record = $1 AND seq = $2", seg(w, 2)),
  },
  {
    name: "segment line: the last row's cut short (no line feed)",
    warm: "next",
    alter: (s, w) =>
      s.query(
        "UPDATE sbx_segments SET line = substring(line from 1 for length(line) - 1) WHERE record = $1 AND seq = $2",
        seg(w, 2),
      ),
  },
  {
    name: "segment line: the last row's with bytes after its line feed",
    warm: "next",
    alter: (s, w) =>
      s.query("UPDATE sbx_segments SET line = line || 'x'::bytea WHERE record = $1 AND seq = $2", seg(w, 2)),
  },
  {
    name: "segment line: a non-UTF-8 byte and a NUL in the last row",
    warm: "next",
    alter: (s, w) =>
      s.query(
        "UPDATE sbx_segments SET line = set_byte(set_byte(line, 5, 255), 6, 0) WHERE record = $1 AND seq = $2",
        seg(w, 2),
      ),
  },
  {
    name: "segment lines: two rows' lines swapped",
    warm: "next",
    alter: (s, w) =>
      s.query(
        "UPDATE sbx_segments t SET line = o.line FROM sbx_segments o WHERE t.record = $1 AND o.record = $1 AND t.seq + o.seq = 3",
        [raw(w.id)],
      ),
  },
  {
    name: "segment lines: 5 bytes moved from the end of row 1 to the front of row 2",
    warm: "next",
    alter: async (s, w) => {
      const r = await s.query<{ seq: number; line: Buffer }>(
        "SELECT seq, line FROM sbx_segments WHERE record = $1 ORDER BY seq",
        [raw(w.id)],
      );
      const [l1, l2] = r.rows.map((x) => x.line) as [Buffer, Buffer];
      await s.query("UPDATE sbx_segments SET line = $3 WHERE record = $1 AND seq = $2", [
        ...seg(w, 1),
        l1.subarray(0, -5),
      ]);
      await s.query("UPDATE sbx_segments SET line = $3 WHERE record = $1 AND seq = $2", [
        ...seg(w, 2),
        Buffer.concat([l1.subarray(-5), l2]),
      ]);
    },
  },
  {
    name: "segment row: the first deleted",
    warm: "bound",
    alter: (s, w) => s.query("DELETE FROM sbx_segments WHERE record = $1 AND seq = 1", [raw(w.id)]),
  },
  {
    name: "segment row: a forged row appended (its line copied from row 2, its columns chained)",
    warm: "next",
    alter: (s, w) =>
      s.query(
        "INSERT INTO sbx_segments (record, seq, prev, head, line, token) SELECT record, 3, head, $2, line, gen_random_uuid() FROM sbx_segments WHERE record = $1 AND seq = 2",
        [raw(w.id), raw(d("forged head"))],
      ),
  },
];

/** Every reader of a record, after `c.alter`. */
async function recordCase(c: RecordCase): Promise<void> {
  const db = await copyOfWorld();
  const warm = await PgStore.open(db.url);
  const fresh = await PgStore.open(db.url);
  const writer = await PgStore.open(db.url);
  try {
    // The warm reader verifies from genesis and makes its first (full) warm read before the change.
    assert.deepEqual(await warm.readRecordBytes(world.id), world.bytes);
    assert.deepEqual(await warm.readRecordBytes(world.id), world.bytes);
    await c.alter(db.sql, world);
    const codes: Record<string, string> = {};
    codes["fresh"] = await refusedWith("fresh reader", () => fresh.readRecordBytes(world.id));
    fresh.forgetVerified();
    codes["fresh record"] = await refusedWith("fresh readRecord", () => fresh.readRecord(world.id));
    // Warm: refused on the next read, or for an older row by the FULL_CHECK_EVERY-th; until then only
    // the bytes it verified; and then it keeps refusing.
    let reads = 0;
    for (;;) {
      reads++;
      let out: Uint8Array | null;
      try {
        out = await warm.readRecordBytes(world.id);
      } catch (e) {
        codes["warm"] = codeOf(e);
        break;
      }
      assert.deepEqual(out, world.bytes, `warm read ${String(reads)} returned other bytes`);
      assert.ok(c.warm === "bound" && reads < FULL_CHECK_EVERY, `warm read ${String(reads)} not refused`);
    }
    if (c.warm === "next") assert.equal(reads, 1);
    await refusedWith("warm reader, again", () => warm.readRecordBytes(world.id));
    codes["writer"] = await refusedWith("another host's append", () =>
      writer.appendSegment(world.id, world.heads[2]!, { kind: "closed", at_ms: 9, outcome: "abandoned" }),
    );
    // The read side (sbx runs/show/verify on PostgreSQL): a verdict of INVALID with a code.
    fresh.forgetVerified();
    const v = await verifyPgRun(fresh, world.id, { hosts: HOSTS }).catch((e: unknown) => {
      codes["verify"] = codeOf(e);
      return null;
    });
    if (v !== null) {
      assert.equal(v.run.valid, false, "verifyPgRun: VALID");
      assert.equal(typeof v.run.error?.code, "string");
      codes["verify"] = v.run.error!.code;
    }
    const dest = FileStore.open(mkdtempSync(join(tmp, "copy-")), { create: true });
    fresh.forgetVerified();
    codes["copy"] = await refusedWith("sbx store copy to a folder", () => copyStore(fresh, dest));
    assert.equal(
      await dest.readRecordBytes(world.id).catch(() => null),
      null,
      "the record reached the folder",
    );
  } finally {
    await Promise.all([warm.close(), fresh.close(), writer.close()]);
    await db.done();
  }
}

test("the world verifies intact through every reader (the control for every case below)", async () => {
  const db = await copyOfWorld();
  const s = await PgStore.open(db.url);
  try {
    assert.deepEqual(await s.readRecordBytes(world.id), world.bytes);
    const v = await verifyPgRun(s, world.id, { hosts: HOSTS });
    assert.equal(v.run.valid, true, JSON.stringify(v.run.error));
    assert.equal(digestBytes((await s.getObject(world.big))!), world.big);
    const back = await s.getSigned(world.att);
    openSigned(world.att, back, ATT_TYPE);
    assert.equal((await s.logs.readLog(LOG)).head, world.logHeads[3]);
    const dest = FileStore.open(mkdtempSync(join(tmp, "copy-")), { create: true });
    const r = await copyStore(s, dest);
    assert.deepEqual([r.records, r.logs, r.entries], [2, 1, 3]);
    const shared = await SharedRunStore.open(db.url, mkdtempSync(join(tmp, "host-")));
    try {
      assert.equal((await shared.pullTree(world.fsRoot)).moved, 6);
    } finally {
      await shared.close();
    }
    await s.appendSegment(world.id, world.heads[2]!, { kind: "closed", at_ms: 9, outcome: "abandoned" });
  } finally {
    await s.close();
    await db.done();
  }
});

// Cases run 4 at a time (each on its own copy of the world): most of a case is waiting on the server.
const PARALLEL = { concurrency: 4 };

describe("run records", PARALLEL, () => {
  for (const c of RECORD_CASES)
    it(`record, ${c.name}: refused by every reader with a code`, () => recordCase(c));
});

// ---- objects and their chunks

interface ObjectCase {
  readonly name: string;
  /** which object of the world: the three-chunk file, the one-chunk file, or a directory */
  readonly of: "big" | "small" | "dir";
  readonly alter: (sql: pg.Client, a: Buffer) => Promise<unknown>;
}

/** Rows of `sql` run with foreign keys off (session_replication_role = replica), as a raw edit can. */
async function noForeignKeys(s: pg.Client, fn: () => Promise<unknown>): Promise<void> {
  await s.query("SET session_replication_role = replica");
  try {
    await fn();
  } finally {
    await s.query("SET session_replication_role = DEFAULT");
  }
}

const chunkOf = "(SELECT chunk FROM sbx_object_chunks WHERE address = $1 AND seq = $2)";
const OBJECT_CASES: ObjectCase[] = [
  ...(["big", "small"] as const).flatMap((of): ObjectCase[] => [
    {
      name: "size one more",
      of,
      alter: (s, a) => s.query("UPDATE sbx_objects SET size = size + 1 WHERE address = $1", [a]),
    },
    {
      name: "size one less",
      of,
      alter: (s, a) => s.query("UPDATE sbx_objects SET size = size - 1 WHERE address = $1", [a]),
    },
    {
      name: "size zero",
      of,
      alter: (s, a) => s.query("UPDATE sbx_objects SET size = 0 WHERE address = $1", [a]),
    },
    {
      name: "chunk count one more (a missing chunk)",
      of,
      alter: (s, a) => s.query("UPDATE sbx_objects SET chunks = chunks + 1 WHERE address = $1", [a]),
    },
    {
      name: "chunk count zero",
      of,
      alter: (s, a) => s.query("UPDATE sbx_objects SET chunks = 0 WHERE address = $1", [a]),
    },
    {
      name: "a byte of a chunk flipped",
      of,
      alter: (s, a) =>
        s.query(
          `UPDATE sbx_chunks SET data = set_byte(data, 3, get_byte(data, 3) # 1) WHERE address = ${chunkOf}`,
          [a, 0],
        ),
    },
    {
      name: "the last chunk cut short by one byte",
      of,
      alter: (s, a) =>
        s.query(
          `UPDATE sbx_chunks SET data = substring(data from 1 for length(data) - 1) WHERE address = ${chunkOf}`,
          [a, of === "big" ? 2 : 0],
        ),
    },
    {
      name: "the last chunk's row deleted (foreign keys off)",
      of,
      alter: (s, a) =>
        noForeignKeys(s, () =>
          s.query(`DELETE FROM sbx_chunks WHERE address = ${chunkOf}`, [a, of === "big" ? 2 : 0]),
        ),
    },
    {
      name: "the chunk list naming a chunk not stored (foreign keys off)",
      of,
      alter: (s, a) =>
        noForeignKeys(s, () =>
          s.query("UPDATE sbx_object_chunks SET chunk = $2 WHERE address = $1 AND seq = 0", [
            a,
            raw(d("nowhere")),
          ]),
        ),
    },
    {
      name: "an extra chunk listed and counted",
      of,
      alter: async (s, a) => {
        await s.query(
          "INSERT INTO sbx_object_chunks (address, seq, chunk) SELECT address, chunks, $2 FROM sbx_objects WHERE address = $1",
          [a, raw(world.small)],
        );
        await s.query("UPDATE sbx_objects SET chunks = chunks + 1, size = size + 13 WHERE address = $1", [a]);
      },
    },
  ]),
  {
    name: "chunk count one less (the last chunk dropped)",
    of: "big",
    alter: (s, a) => s.query("UPDATE sbx_objects SET chunks = chunks - 1 WHERE address = $1", [a]),
  },
  {
    name: "chunks 0 and 1 swapped in the list",
    of: "big",
    alter: (s, a) =>
      s.query(
        "UPDATE sbx_object_chunks t SET chunk = o.chunk FROM sbx_object_chunks o WHERE t.address = $1 AND o.address = $1 AND t.seq + o.seq = 1",
        [a],
      ),
  },
  {
    name: "chunk 1 deleted from the list",
    of: "big",
    alter: (s, a) => s.query("DELETE FROM sbx_object_chunks WHERE address = $1 AND seq = 1", [a]),
  },
  {
    name: "chunk 0 listed twice (in place of chunk 1)",
    of: "big",
    alter: (s, a) =>
      s.query(`UPDATE sbx_object_chunks SET chunk = ${chunkOf} WHERE address = $1 AND seq = 1`, [a, 0]),
  },
  {
    name: "7 bytes moved from the end of chunk 0 to the front of chunk 1",
    of: "big",
    alter: async (s, a) => {
      const r = await s.query<{ seq: number; data: Buffer }>(
        "SELECT oc.seq, c.data FROM sbx_object_chunks oc JOIN sbx_chunks c ON c.address = oc.chunk WHERE oc.address = $1 AND oc.seq < 2 ORDER BY oc.seq",
        [a],
      );
      const [c0, c1] = r.rows.map((x) => x.data) as [Buffer, Buffer];
      await s.query(`UPDATE sbx_chunks SET data = $3 WHERE address = ${chunkOf}`, [a, 0, c0.subarray(0, -7)]);
      await s.query(`UPDATE sbx_chunks SET data = $3 WHERE address = ${chunkOf}`, [
        a,
        1,
        Buffer.concat([c0.subarray(-7), c1]),
      ]);
    },
  },
  {
    name: "a directory's bytes replaced by another directory's",
    of: "dir",
    alter: (s, a) =>
      s.query(
        `UPDATE sbx_chunks SET data = (SELECT data FROM sbx_chunks WHERE address = $3) WHERE address = ${chunkOf}`,
        [a, 0, raw(world.fsRoot)],
      ),
  },
];

/** Every reader of an object, after `c.alter`. */
async function objectCase(c: ObjectCase): Promise<void> {
  const db = await copyOfWorld();
  const s = await PgStore.open(db.url);
  const a = { big: world.big, small: world.small, dir: world.dir }[c.of];
  try {
    await c.alter(db.sql, raw(a));
    await refusedWith("getObject", () => s.getObject(a));
    await refusedWith("getObjectStream read to its end", async () => {
      const src = await s.getObjectStream(a);
      if (src === null) return null;
      let n = 0;
      for await (const part of src) n += part.length;
      return n;
    });
    const v = await verifyPgRun(s, world.id, { hosts: HOSTS });
    assert.equal(v.run.valid, false, "verifyPgRun: VALID");
    assert.equal(typeof v.run.error?.code, "string");
    // The restore path of another host: the tree streamed down into its local store.
    const shared = await SharedRunStore.open(db.url, mkdtempSync(join(tmp, "host-")));
    try {
      await refusedWith("pullTree (restore)", () => shared.pullTree(world.fsRoot));
      assert.equal(shared.local.getObjectSync(a), null, "the altered object reached the host's local store");
    } finally {
      await shared.close();
    }
    const dest = FileStore.open(mkdtempSync(join(tmp, "copy-")), { create: true });
    await refusedWith("sbx store copy to a folder", () => copyStore(s, dest));
    assert.equal(await dest.hasObject(a), false, "the altered object reached the folder");
  } finally {
    await s.close();
    await db.done();
  }
}

describe("objects", PARALLEL, () => {
  for (const c of OBJECT_CASES)
    it(`object (${c.of}), ${c.name}: refused by every reader with a code`, () => objectCase(c));
});

// ---- ledgers (log entries)

interface LogCase {
  readonly name: string;
  readonly alter: (sql: pg.Client) => Promise<unknown>;
}

const entry =
  (seq: number, set: string, params: unknown[] = []) =>
  (s: pg.Client) =>
    s.query(`UPDATE sbx_log_entries SET ${set} WHERE log = $1 AND seq = $2`, [LOG, seq, ...params]);
const LOG_CASES: LogCase[] = [
  {
    name: "a payload byte flipped",
    alter: entry(2, "payload = set_byte(payload, 0, get_byte(payload, 0) # 1)"),
  },
  { name: "the last payload emptied", alter: entry(3, "payload = ''::bytea") },
  { name: "the first entry's prev altered", alter: entry(1, "prev = $3", [raw(d("x"))]) },
  { name: "a prev of 33 bytes", alter: entry(3, "prev = prev || '\\x00'::bytea") },
  { name: "the last head altered", alter: entry(3, "head = $3", [raw(d("x"))]) },
  { name: "a head emptied", alter: entry(2, "head = ''::bytea") },
  { name: "the last entry renumbered", alter: entry(3, "seq = 9") },
  {
    name: "two entries' seq swapped",
    alter: async (s) => {
      await entry(1, "seq = 100")(s);
      await entry(2, "seq = 1")(s);
      await entry(100, "seq = 2")(s);
    },
  },
  {
    name: "the middle entry deleted",
    alter: (s) => s.query("DELETE FROM sbx_log_entries WHERE log = $1 AND seq = 2", [LOG]),
  },
  {
    name: "the first entry deleted",
    alter: (s) => s.query("DELETE FROM sbx_log_entries WHERE log = $1 AND seq = 1", [LOG]),
  },
  {
    name: "two entries' payloads swapped",
    alter: (s) =>
      s.query(
        "UPDATE sbx_log_entries t SET payload = o.payload FROM sbx_log_entries o WHERE t.log = $1 AND o.log = $1 AND t.seq + o.seq = 3",
        [LOG],
      ),
  },
  {
    name: "a payload byte moved across the entry boundary",
    alter: async (s) => {
      await entry(1, "payload = payload || 't'::bytea")(s);
      await entry(2, "payload = substring(payload from 2)")(s);
    },
  },
  {
    name: "a forged entry appended (chained columns, a head that is not its bytes')",
    alter: (s) =>
      s.query(
        "INSERT INTO sbx_log_entries (log, seq, prev, head, payload, token) SELECT log, 4, head, $2, 'four'::bytea, gen_random_uuid() FROM sbx_log_entries WHERE log = $1 AND seq = 3",
        [LOG, raw(d("forged"))],
      ),
  },
  {
    name: "the middle entry moved to another log",
    alter: async (s) => {
      await s.query("INSERT INTO sbx_logs (name) VALUES ('spend/elsewhere')");
      await s.query(
        "UPDATE sbx_log_entries SET log = 'spend/elsewhere', seq = 1 WHERE log = $1 AND seq = 2",
        [LOG],
      );
    },
  },
];

/** Every reader of a ledger, after `c.alter`. */
async function logCase(c: LogCase): Promise<void> {
  const db = await copyOfWorld();
  const warm = await PgStore.open(db.url);
  const fresh = await PgStore.open(db.url);
  const writer = await PgStore.open(db.url);
  try {
    assert.equal((await warm.logs.readLog(LOG)).head, world.logHeads[3]); // held by this store
    await c.alter(db.sql);
    await refusedWith("fresh readLog", () => fresh.logs.readLog(LOG));
    await refusedWith("warm readLog", () => warm.logs.readLog(LOG));
    await refusedWith("warm readLog, again", () => warm.logs.readLog(LOG));
    await refusedWith("warm appendLog", () => warm.logs.appendLog(LOG, world.logHeads[3]!, utf8("four")));
    await refusedWith("another host's appendLog", () =>
      writer.logs.appendLog(LOG, world.logHeads[3]!, utf8("four")),
    );
    await refusedWith("another host's update", () =>
      writer.logs.update(LOG, () => ({ payload: utf8("four"), result: 1 })),
    );
    const dest = FileStore.open(mkdtempSync(join(tmp, "copy-")), { create: true });
    await refusedWith("sbx store copy to a folder", () => copyStore(fresh, dest));
    const there = await logStoreOf(dest).readLog(LOG);
    assert.equal(there.entries.length, 0, "entries of the altered ledger reached the folder");
  } finally {
    await Promise.all([warm.close(), fresh.close(), writer.close()]);
    await db.done();
  }
}

describe("ledgers", PARALLEL, () => {
  for (const c of LOG_CASES) it(`ledger, ${c.name}: refused by every reader with a code`, () => logCase(c));
});

// ---- signed objects

interface SignedCase {
  readonly name: string;
  readonly alter: (sql: pg.Client, a: Buffer) => Promise<unknown>;
}

const SIGNED_CASES: SignedCase[] = [
  {
    name: "a byte of the envelope flipped (no longer canonical JSON)",
    alter: (s, a) =>
      s.query("UPDATE sbx_signed SET envelope = set_byte(envelope, 0, 0) WHERE address = $1", [a]),
  },
  {
    name: "the envelope emptied",
    alter: (s, a) => s.query("UPDATE sbx_signed SET envelope = ''::bytea WHERE address = $1", [a]),
  },
  {
    name: "a signature altered (the payload kept)",
    alter: async (s, a) => {
      const r = await s.query<{ envelope: Buffer }>("SELECT envelope FROM sbx_signed WHERE address = $1", [
        a,
      ]);
      const env = JSON.parse(r.rows[0]!.envelope.toString()) as { signatures: { sig: string }[] };
      const sig = Buffer.from(env.signatures[0]!.sig, "base64");
      sig[0] = sig[0]! ^ 1;
      env.signatures[0]!.sig = sig.toString("base64");
      await s.query("UPDATE sbx_signed SET envelope = $2 WHERE address = $1", [
        a,
        Buffer.from(canonicalBytes(env)),
      ]);
    },
  },
  {
    name: "the envelope replaced by another signed object's",
    alter: (s, a) =>
      s.query("UPDATE sbx_signed SET envelope = $2 WHERE address = $1", [
        a,
        Buffer.from(canonicalBytes(signPayload("application/vnd.test+json", { other: 1 }, testKey("host")))),
      ]),
  },
];

/** Every reader of a signed object, after `c.alter`. */
async function signedCase(c: SignedCase): Promise<void> {
  const db = await copyOfWorld();
  const s = await PgStore.open(db.url);
  try {
    await c.alter(db.sql, raw(world.att));
    await refusedWith("getSigned then openSigned", async () =>
      openSigned(world.att, await s.getSigned(world.att), ATT_TYPE),
    );
    const v = await verifyPgRun(s, world.id, { hosts: HOSTS });
    assert.equal(v.run.valid, false, "verifyPgRun: VALID");
    assert.equal(typeof v.run.error?.code, "string");
    const dest = FileStore.open(mkdtempSync(join(tmp, "copy-")), { create: true });
    await refusedWith("sbx store copy to a folder", () => copyStore(s, dest));
    assert.equal(dest.getSignedSync(world.att), null, "the altered envelope reached the folder");
  } finally {
    await s.close();
    await db.done();
  }
}

describe("signed objects", PARALLEL, () => {
  for (const c of SIGNED_CASES)
    it(`signed object, ${c.name}: refused by every reader with a code`, () => signedCase(c));
});

// ---- seeded random damage: bytes flipped, inserted, removed, cut or replaced in any column read

/** A small deterministic generator (xorshift32), so a failing case can be replayed. */
function xorshift(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

/** damage returns `b` altered one random way (never equal to `b`). */
function damage(b: Buffer, next: () => number): Buffer {
  for (;;) {
    const at = b.length === 0 ? 0 : next() % b.length;
    let out: Buffer;
    switch (next() % 6) {
      case 0:
        out = Buffer.from(b);
        if (b.length > 0) out[at] = out[at]! ^ (1 << (next() % 8));
        break;
      case 1:
        out = Buffer.concat([b.subarray(0, at), Buffer.from([next() % 256]), b.subarray(at)]);
        break;
      case 2:
        out = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
        break;
      case 3:
        out = b.subarray(0, at);
        break;
      case 4:
        out = Buffer.from(Array.from({ length: next() % 80 }, () => next() % 256));
        break;
      default:
        out = Buffer.concat([b, b.subarray(0, 1 + (next() % 40))]);
    }
    if (!out.equals(b)) return out;
  }
}

const TRIALS = 240;

test(`seeded random damage (${String(TRIALS)} trials) to any column read: a coded refusal from fresh and warm readers, never other bytes`, async () => {
  const db = await copyOfWorld();
  const warm = await PgStore.open(db.url);
  const fresh = await PgStore.open(db.url);
  const next = xorshift(0x5b7a11);
  const targets: {
    table: string;
    key: string;
    keys: unknown[];
    col: string;
    kind: "record" | "log" | "object";
    address?: Digest;
  }[] = [
    { table: "sbx_records", key: "id = $1", keys: [raw(world.id)], col: "header", kind: "record" },
    ...[1, 2].flatMap((seq) =>
      ["prev", "head", "line"].map((col) => ({
        table: "sbx_segments",
        key: "record = $1 AND seq = $2",
        keys: [raw(world.id), seq],
        col,
        kind: "record" as const,
      })),
    ),
    ...[1, 2, 3].flatMap((seq) =>
      ["prev", "head", "payload"].map((col) => ({
        table: "sbx_log_entries",
        key: "log = $1 AND seq = $2",
        keys: [LOG, seq],
        col,
        kind: "log" as const,
      })),
    ),
    {
      table: "sbx_chunks",
      key: "address = $1",
      keys: [raw(world.small)],
      col: "data",
      kind: "object",
      address: world.small,
    },
    {
      table: "sbx_chunks",
      key: "address = $1",
      keys: [raw(world.dir)],
      col: "data",
      kind: "object",
      address: world.dir,
    },
  ];
  try {
    for (let t = 0; t < TRIALS; t++) {
      const tg = targets[next() % targets.length]!;
      const where = tg.key;
      const r = await db.sql.query<Record<string, Buffer>>(
        `SELECT ${tg.col} AS v FROM ${tg.table} WHERE ${where}`,
        tg.keys,
      );
      const was = r.rows[0]!["v"]!;
      const now = damage(was, next);
      const what = `trial ${String(t)}: ${tg.table}.${tg.col} ${JSON.stringify(tg.keys.slice(1))} ${was.toString("hex").slice(0, 40)}… → ${now.toString("hex").slice(0, 80)}`;
      await db.sql.query(`UPDATE ${tg.table} SET ${tg.col} = $${String(tg.keys.length + 1)} WHERE ${where}`, [
        ...tg.keys,
        now,
      ]);
      try {
        if (tg.kind === "record") {
          fresh.forgetVerified();
          await refusedWith(`${what}: fresh`, () => fresh.readRecordBytes(world.id));
          await refusedWith(`${what}: warm, asked in full`, () =>
            warm.readRecordBytes(world.id, { full: true }),
          );
        } else if (tg.kind === "log") {
          await refusedWith(`${what}: fresh`, () => new PgLogStore(fresh.pool, 1000).readLog(LOG));
          await refusedWith(`${what}: warm`, () => warm.logs.readLog(LOG));
        } else {
          await refusedWith(`${what}: getObject`, () => fresh.getObject(tg.address!));
          const v = await verifyPgRun(fresh, world.id, { hosts: HOSTS });
          assert.equal(v.run.valid, false, `${what}: verifyPgRun VALID`);
        }
      } finally {
        await db.sql.query(
          `UPDATE ${tg.table} SET ${tg.col} = $${String(tg.keys.length + 1)} WHERE ${where}`,
          [...tg.keys, was],
        );
      }
      // Restored: the warm reader holds the record or the ledger as it verified it.
      if (tg.kind === "record")
        assert.deepEqual(await warm.readRecordBytes(world.id, { full: true }), world.bytes);
    }
  } finally {
    await Promise.all([warm.close(), fresh.close()]);
    await db.done();
  }
});

// The logs table: a ledger's sbx_logs row deleted by hand (foreign keys off) leaves its entries
// readable; `sbx store copy` used to list ledgers from that table alone and silently left such a
// ledger behind (a revocation ledger not carried is a grant un-revoked at the destination).
test("ledger, its sbx_logs row deleted (foreign keys off): still read whole, and carried whole by sbx store copy", async () => {
  const db = await copyOfWorld();
  const s = await PgStore.open(db.url);
  try {
    await noForeignKeys(db.sql, () => db.sql.query("DELETE FROM sbx_logs WHERE name = $1", [LOG]));
    assert.equal((await s.logs.readLog(LOG)).head, world.logHeads[3]);
    const dest = FileStore.open(mkdtempSync(join(tmp, "copy-")), { create: true });
    const r = await copyStore(s, dest);
    assert.deepEqual([r.logs, r.entries], [1, 3]);
    assert.equal((await logStoreOf(dest).readLog(LOG)).head, world.logHeads[3]);
  } finally {
    await s.close();
    await db.done();
  }
});

/** Counts the chunk reads of object `a` (getObjectStream's per-chunk statement) a store makes from now on. */
function chunkReads(s: PgStore, a: Digest): { n: number } {
  const seen = { n: 0 };
  const pool = s.pool as unknown as { query: (...args: unknown[]) => unknown };
  const query = pool.query.bind(pool);
  pool.query = (...args: unknown[]) => {
    const [text, values] = args as [unknown, unknown[] | undefined];
    if (
      typeof text === "string" &&
      text.includes("FROM sbx_object_chunks oc LEFT JOIN") &&
      Buffer.isBuffer(values?.[0]) &&
      values[0].equals(raw(a))
    )
      seen.n++;
    return query(...args);
  };
  return seen;
}

// Resource exhaustion: a chunk list altered to repeat a chunk, with the object's size and count
// altered to match, made a restore (and `sbx verify`) fetch, write and hash every repeated chunk
// before the whole failed its address. A snapshot entry gives each file's size, verified with the
// tree: a reader that holds it refuses an object recorded with another size before reading a chunk.
test("object, a chunk list forged to repeat a chunk 40 times (size and count to match): restore and verify refuse it before reading any chunk", async () => {
  const db = await copyOfWorld();
  const s = await PgStore.open(db.url);
  const shared = await SharedRunStore.open(db.url, mkdtempSync(join(tmp, "host-")));
  try {
    const a = raw(world.big);
    await db.sql.query(
      "INSERT INTO sbx_object_chunks (address, seq, chunk) SELECT $1, 2 + g, (SELECT chunk FROM sbx_object_chunks WHERE address = $1 AND seq = 0) FROM generate_series(1, 40) g",
      [a],
    );
    await db.sql.query(
      "UPDATE sbx_objects SET chunks = chunks + 40, size = size + 40 * $2::bigint WHERE address = $1",
      [a, CHUNK_BYTES],
    );
    const pulled = chunkReads(shared.pg, world.big);
    assert.equal(
      await refusedWith("pullTree (restore)", () => shared.pullTree(world.fsRoot)),
      "ObjectMismatch",
    );
    assert.equal(pulled.n, 0, "chunks read by the restore");
    assert.equal(shared.local.getObjectSync(world.big), null);
    const verified = chunkReads(s, world.big);
    const v = await verifyPgRun(s, world.id, { hosts: HOSTS });
    assert.deepEqual([v.run.valid, v.run.error?.code], [false, "ObjectMismatch"]);
    assert.equal(verified.n, 0, "chunks read by the verification");
  } finally {
    await shared.close();
    await s.close();
    await db.done();
  }
});

// An attacker who owns the tables can drop their CHECKs too: an id or address of another length
// than 32 bytes made the listing behind `sbx runs` and `sbx store copy` throw an uncoded RangeError.
test("an id or address of 31 bytes (its CHECK dropped): the listings refuse it with a code", async () => {
  for (const [table, col, insert] of [
    ["sbx_records", "id", "INSERT INTO sbx_records (id, header) VALUES ($1, 'x'::bytea)"],
    ["sbx_objects", "address", "INSERT INTO sbx_objects (address, size, chunks) VALUES ($1, 0, 0)"],
    ["sbx_signed", "address", "INSERT INTO sbx_signed (address, envelope) VALUES ($1, '{}'::bytea)"],
  ] as const) {
    const db = await copyOfWorld();
    const s = await PgStore.open(db.url);
    try {
      await db.sql.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_${col}_check`);
      await db.sql.query(insert, [randomBytes(31)]);
      if (table === "sbx_records") await refusedWith("listRecords (sbx runs)", () => s.listRecords());
      const dest = FileStore.open(mkdtempSync(join(tmp, "copy-")), { create: true });
      await refusedWith(`sbx store copy, ${table}`, () => copyStore(s, dest));
    } finally {
      await s.close();
      await db.done();
    }
  }
});

// What a chain cannot tell on its own: the newest rows deleted (a record or a ledger rolled back to
// an earlier state). A fresh reader has nothing to compare with and reads the earlier state — exactly
// a prefix of what was there, never other bytes; a reader that held the newer state refuses at once
// (the last held row, or every held entry, is checked on each read).
test("the newest rows deleted (rolled back): a warm reader refuses at once, a fresh reader reads exactly the earlier prefix", async () => {
  const db = await copyOfWorld();
  const warm = await PgStore.open(db.url);
  const fresh = await PgStore.open(db.url);
  try {
    assert.deepEqual(await warm.readRecordBytes(world.id), world.bytes);
    assert.equal((await warm.logs.readLog(LOG)).head, world.logHeads[3]);
    await db.sql.query("DELETE FROM sbx_segments WHERE record = $1 AND seq = 2", [raw(world.id)]);
    await db.sql.query("DELETE FROM sbx_log_entries WHERE log = $1 AND seq = 3", [LOG]);
    assert.equal(await refusedWith("warm record read", () => warm.readRecordBytes(world.id)), "StoreCorrupt");
    assert.equal(await refusedWith("warm ledger read", () => warm.logs.readLog(LOG)), "LogBroken");
    const back = (await fresh.readRecordBytes(world.id))!;
    assert.ok(back.length < world.bytes.length);
    assert.deepEqual(back, world.bytes.subarray(0, back.length));
    assert.equal((await fresh.logs.readLog(LOG)).head, world.logHeads[2]);
  } finally {
    await Promise.all([warm.close(), fresh.close()]);
    await db.done();
  }
});
