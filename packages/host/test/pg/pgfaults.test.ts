// Faults of the PostgreSQL store (§13.7): the server restarted under a stream of appends (nothing
// acknowledged lost, nothing doubled), an unreachable server (StoreUnreachable, then recovery), a
// host SIGKILLed mid-transaction (nothing partial visible, nothing left locked). Runs its own
// cluster, since it restarts the server.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import { readRun } from "@sbx/sandbox-attest/store";
import { isHostError } from "../../src/errors.ts";
import { LOG_GENESIS } from "../../src/log/index.ts";
import {
  PgStore,
  restartClusterAsync,
  startCluster,
  startServer,
  stopCluster,
  stopServer,
  type TestCluster,
} from "../../src/pg/index.ts";

const d = (s: string): Digest => digestBytes(utf8(s));
let c: TestCluster;
let store: PgStore;
before(async () => {
  c = await startCluster();
  await PgStore.init(c.url);
  store = await PgStore.open(c.url, { max: 8, retryMs: 60_000 });
});
after(async () => {
  await store.close();
  stopCluster(c);
});

test("server restarted (immediate, as a crash) twice under 4 writers' appends: every acknowledged append kept, none doubled", async () => {
  const writers = 4;
  const each = 120;
  const ids = await Promise.all(
    Array.from({ length: writers }, (_, w) => store.createRecord(d(`restart ${String(w)}`), d("g"))),
  );
  const acked: Digest[][] = ids.map(() => []);
  let done = 0;
  const write = async (w: number) => {
    const id = ids[w] as Digest;
    let head = id;
    for (let i = 0; i < each; i++) {
      head = await store.appendSegment(id, head, {
        kind: "executed",
        attestation: d(`w${String(w)} ${String(i)}`),
      });
      acked[w]?.push(head);
    }
    done++;
  };
  const logWrites = (async () => {
    let head = LOG_GENESIS;
    const heads: Digest[] = [];
    for (let i = 0; i < each; i++)
      heads.push((head = await store.logs.appendLog("restart/log", head, utf8(String(i)))));
    return heads;
  })();
  const all = Promise.all(Array.from({ length: writers }, (_, w) => write(w)));
  const progress = () => acked.reduce((n, a) => n + a.length, 0);
  let restarts = 0;
  for (const at of [40, 200]) {
    while (progress() < at && done < writers) await new Promise((r) => setTimeout(r, 5));
    await restartClusterAsync(c, "immediate");
    restarts++;
  }
  await all;
  const logHeads = await logWrites;
  assert.equal(restarts, 2);
  for (let w = 0; w < writers; w++) {
    const record = await readRun(store, ids[w] as Digest);
    assert.equal(record.segments.length, each, `writer ${String(w)}`);
    assert.deepEqual(record.heads.slice(1), acked[w]);
  }
  const log = await store.logs.readLog("restart/log");
  assert.deepEqual(
    log.entries.map((e) => e.head),
    logHeads,
  );
});

test("server down: a write fails with StoreUnreachable after its retry time; once it is back, writes succeed", async () => {
  const short = await PgStore.open(c.url, { retryMs: 500 });
  const id = await short.createRecord(d("down"), d("g"));
  stopServer(c);
  try {
    await assert.rejects(short.appendSegment(id, id, { kind: "executed", attestation: d("x") }), (e) =>
      isHostError(e, "StoreUnreachable"),
    );
    await assert.rejects(PgStore.open(c.url, { retryMs: 300 }), (e) => isHostError(e, "StoreUnreachable"));
  } finally {
    startServer(c);
  }
  const h = await short.appendSegment(id, id, { kind: "executed", attestation: d("after") });
  assert.deepEqual((await readRun(short, id)).heads, [id, h]);
  await short.close();
});

function killed(op: string[], step: number): void {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "kill-child.ts"), c.url, ...op],
    {
      env: { ...process.env, SBX_STORE_CRASH_AT: String(step) },
      encoding: "utf8",
    },
  );
  assert.equal(r.signal, "SIGKILL", r.stdout + r.stderr);
}

test("a host SIGKILLed mid-transaction: nothing partial is visible, nothing stays locked", async () => {
  const id = await store.createRecord(d("kill"), d("g"));
  const h1 = await store.appendSegment(id, id, { kind: "executed", attestation: d("before") });
  killed(["append", id, h1], 1); // the record read and checked, the one-statement insert not sent
  assert.equal((await readRun(store, id)).head, h1);
  const h2 = await store.appendSegment(id, h1, { kind: "executed", attestation: d("survivor") });
  assert.deepEqual((await readRun(store, id)).heads, [id, h1, h2]);

  const big = new Uint8Array(3 * (1 << 20)).map((_, i) => (i * 31) >>> 8);
  killed(["object"], 2); // two of three chunks in, the object not recorded
  assert.equal(await store.hasObject(digestBytes(big)), false);
  killed(["object"], 4); // every chunk in, the object's rows written, not committed
  assert.equal(await store.hasObject(digestBytes(big)), false);
  assert.equal(await store.putObject(big), digestBytes(big));
  assert.equal(digestBytes((await store.getObject(digestBytes(big))) ?? new Uint8Array()), digestBytes(big));

  killed(["log", "kill/log"], 1);
  assert.equal((await store.logs.readLog("kill/log")).entries.length, 0);
  await store.logs.appendLog("kill/log", LOG_GENESIS, utf8("after"));
  assert.equal((await store.logs.readLog("kill/log")).entries.length, 1);
});
