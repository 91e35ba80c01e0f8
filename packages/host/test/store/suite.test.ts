// One store test suite, run against every Store (§13.7) — memory, the file store, PostgreSQL — and
// every LogStore (folder, PostgreSQL): the same calls must give the same answers and the same codes.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, digestBytes, signPayload, testKey, utf8, type Digest } from "@sbx/wire";
import {
  decodeRecord,
  isSandboxAttestError,
  type Segment,
  type SnapshotRef,
} from "@sbx/sandbox-attest/runrecord";
import { MemoryStore, openSigned, readRun, resumeRun, type Store } from "@sbx/sandbox-attest/store";
import { FileStore } from "../../src/store/index.ts";
import { FileLogStore, LOG_GENESIS, type LogStore } from "../../src/log/index.ts";
import { PgStore } from "../../src/pg/index.ts";
import { isHostError } from "../../src/errors.ts";
import { testDb, type TestDb } from "../pg/pgtest.ts";

const d = (s: string): Digest => digestBytes(utf8(s));
const exec = (n: string): Segment => ({ kind: "executed", attestation: d(n) });
const SNAP: SnapshotRef = { fs_root: d("root"), manifest: d("manifest") };
const OTHER: SnapshotRef = { fs_root: d("other root"), manifest: d("manifest") };
const code = (c: string) => (e: unknown) => (isSandboxAttestError(e) || isHostError(e)) && e.code === c;
const lost = (e: unknown) => code("StaleHead")(e) || code("AppendConflict")(e);
const IDLE = { uj: "10", provenance: "estimated" as const, source: "model:test", basis: { w: "1" } };
const anyEnv = { satisfies: () => true };

interface Subject {
  store: Store;
  logs: LogStore;
  close(): Promise<void>;
}
const subjects: Record<string, () => Promise<Subject>> = {
  memory: () => {
    const dir = mkdtempSync(join(tmpdir(), "sbx-suite-"));
    return Promise.resolve({
      store: new MemoryStore(),
      logs: new FileLogStore(dir),
      close: () => Promise.resolve(),
    });
  },
  file: () => {
    const dir = mkdtempSync(join(tmpdir(), "sbx-suite-"));
    const store = FileStore.open(join(dir, "store"), { create: true });
    return Promise.resolve({
      store,
      logs: new FileLogStore(join(dir, "logs")),
      close: () => Promise.resolve(),
    });
  },
  postgres: async () => {
    const db: TestDb = await testDb();
    const store = await PgStore.open(db.url);
    return {
      store,
      logs: store.logs,
      close: async () => {
        await store.close();
        await db.done();
      },
    };
  },
};

for (const [name, make] of Object.entries(subjects)) {
  describe(`store suite: ${name}`, () => {
    let s: Subject;
    let n = 0;
    const unit = () => d(`${name} unit ${String(++n)}`);
    before(async () => {
      s = await make();
    });
    after(() => s.close());

    test("objects: put returns the address, re-put deduplicates, get checks, absent is null", async () => {
      const a = await s.store.putObject(utf8("content"));
      assert.equal(a, d("content"));
      assert.equal(await s.store.putObject(utf8("content")), a);
      assert.deepEqual(await s.store.getObject(a), utf8("content"));
      assert.equal(await s.store.hasObject(a), true);
      assert.equal(await s.store.hasObject(d("absent")), false);
      assert.equal(await s.store.getObject(d("absent")), null);
      const empty = await s.store.putObject(new Uint8Array(0));
      assert.deepEqual(await s.store.getObject(empty), new Uint8Array(0));
    });

    test("objects: a large object (several 1 MiB chunks, not a multiple) comes back byte for byte", async () => {
      const big = new Uint8Array(3 * (1 << 20) + 12_345);
      for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
      const a = await s.store.putObject(big);
      assert.equal(a, digestBytes(big));
      const back = await s.store.getObject(a);
      assert.ok(back !== null && Buffer.from(back).equals(Buffer.from(big)));
    });

    test("signed objects: stored under the payload address, verified on open", async () => {
      const env = signPayload("application/vnd.test+json", { a: name }, testKey("host"));
      const a = await s.store.putSigned(env);
      assert.equal(a, addressOf({ a: name }));
      assert.equal(await s.store.putSigned(env), a);
      assert.equal(openSigned(a, await s.store.getSigned(a), "application/vnd.test+json").address, a);
      assert.equal(await s.store.getSigned(d("absent")), null);
    });

    test("records: create, RecordExists, append, StaleHead, RecordMissing, RecordClosed", async () => {
      const u = unit();
      const id = await s.store.createRecord(u, d("grants"));
      await assert.rejects(s.store.createRecord(u, d("grants")), code("RecordExists"));
      const h1 = await s.store.appendSegment(id, id, exec("a"));
      await assert.rejects(s.store.appendSegment(id, id, exec("b")), code("StaleHead"));
      await assert.rejects(
        s.store.appendSegment(d("nothing"), d("nothing"), exec("b")),
        code("RecordMissing"),
      );
      assert.equal(await s.store.readRecordBytes(d("nothing")), null);
      const h2 = await s.store.appendSegment(id, h1, { kind: "closed", at_ms: 1, outcome: "abandoned" });
      await assert.rejects(s.store.appendSegment(id, h2, exec("c")), code("RecordClosed"));
      const bytes = await s.store.readRecordBytes(id);
      assert.ok(bytes !== null);
      const { record } = decodeRecord(bytes);
      assert.deepEqual(record.heads, [id, h1, h2]);
      assert.equal((await readRun(s.store, id)).head, h2);
    });

    test("records: §13.3 refusals come through the store with their codes", async () => {
      const id = await s.store.createRecord(unit(), d("grants"));
      await assert.rejects(
        s.store.appendSegment(id, id, {
          kind: "resumed",
          snapshot: SNAP,
          at_ms: 1,
          idle_uj: "0",
          idle_provenance: "estimated",
          idle_source: "x",
          idle_basis: { w: "1" },
        }),
        code("PhaseViolation"),
      );
      const h1 = await s.store.appendSegment(id, id, exec("a"));
      const h2 = await s.store.appendSegment(id, h1, { kind: "suspended", snapshot: SNAP, at_ms: 2 });
      await assert.rejects(s.store.appendSegment(id, h2, exec("b")), code("PhaseViolation"));
      await assert.rejects(
        resumeRun(s.store, id, { offered: OTHER, env: anyEnv, idle: IDLE, atMs: 3 }),
        code("SnapshotMismatch"),
      );
      const h3 = await resumeRun(s.store, id, { offered: SNAP, env: anyEnv, idle: IDLE, atMs: 3 });
      assert.equal((await readRun(s.store, id)).head, h3);
      // A second host resuming the same parked run from the head it read loses.
      await assert.rejects(s.store.appendSegment(id, h2, exec("late")), code("StaleHead"));
    });

    test("records: of 24 concurrent resumes of one parked run exactly one wins, the rest lose the head", async () => {
      const id = await s.store.createRecord(unit(), d("grants"));
      const h1 = await s.store.appendSegment(id, id, exec("a"));
      await s.store.appendSegment(id, h1, { kind: "suspended", snapshot: SNAP, at_ms: 2 });
      const tries = await Promise.allSettled(
        Array.from({ length: 24 }, (_, i) =>
          resumeRun(s.store, id, { offered: SNAP, env: anyEnv, idle: IDLE, atMs: 10 + i }),
        ),
      );
      const won = tries.filter((t) => t.status === "fulfilled");
      assert.equal(won.length, 1);
      for (const t of tries)
        if (t.status === "rejected")
          assert.ok(lost(t.reason) || code("PhaseViolation")(t.reason), String(t.reason));
      const record = await readRun(s.store, id);
      assert.equal(record.segments.length, 3);
      assert.equal(record.head, (won[0] as PromiseFulfilledResult<Digest>).value);
    });

    test("logs: append, read, StaleHead, names kept apart", async () => {
      const log = `test/${name}-${String(++n)}`;
      assert.deepEqual(await s.logs.readLog(log), { entries: [], head: LOG_GENESIS });
      const h1 = await s.logs.appendLog(log, LOG_GENESIS, utf8("one"));
      const h2 = await s.logs.appendLog(log, h1, utf8("two"));
      await assert.rejects(s.logs.appendLog(log, h1, utf8("three")), code("StaleHead"));
      const st = await s.logs.readLog(log);
      assert.equal(st.head, h2);
      assert.deepEqual(
        st.entries.map((e) => Buffer.from(e.payload).toString()),
        ["one", "two"],
      );
      assert.deepEqual(
        st.entries.map((e) => e.prev),
        [LOG_GENESIS, h1],
      );
      assert.equal((await s.logs.readLog(`${log}-other`)).entries.length, 0);
      await assert.rejects(s.logs.readLog("../escape"), RangeError);
    });

    test("logs: update decides on the state it appends to: 16 racing debits never pass a budget of 10", async () => {
      const log = `budget/${name}-${String(++n)}`;
      const debit = () =>
        s.logs.update(log, (st) =>
          st.entries.length >= 10
            ? null
            : { payload: utf8(`debit ${String(st.entries.length + 1)}`), result: st.entries.length + 1 },
        );
      const results = await Promise.all(Array.from({ length: 16 }, debit));
      assert.equal(results.filter((r) => r !== null).length, 10);
      const st = await s.logs.readLog(log);
      assert.equal(st.entries.length, 10);
      assert.deepEqual(
        st.entries.map((e) => Buffer.from(e.payload).toString()),
        Array.from({ length: 10 }, (_, i) => `debit ${String(i + 1)}`),
      );
    });
  });
}
