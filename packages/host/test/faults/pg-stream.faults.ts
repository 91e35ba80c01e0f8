// npm run test:faults: a 1 GiB object streamed into PostgreSQL and back in 1 MiB chunks with bounded
// memory (§13.7.1): the process's resident memory grows by far less than the object, and the bytes
// come back verified by address. SBX_PG_STREAM_MIB changes the size.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createBlake3, formatDigest } from "@sbx/wire";
import { PgStore } from "../../src/pg/index.ts";
import { testDb, type TestDb } from "../pg/pgtest.ts";

const MIB = Number(process.env["SBX_PG_STREAM_MIB"] ?? "1024");
let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

// Deterministic bytes, made piece by piece: never the whole object in memory.
async function* source(h: ReturnType<typeof createBlake3>): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < MIB * 4; i++) {
    const piece = new Uint8Array(256 * 1024).fill(i & 0xff);
    piece[0] = i >> 8;
    h.update(piece);
    await Promise.resolve();
    yield piece;
  }
}

test(`a ${String(MIB)} MiB object streams in and out with bounded memory, verified by address`, async (t) => {
  const store = await PgStore.open(db.url);
  try {
    const base = process.memoryUsage().rss;
    let peak = base;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      const h = createBlake3();
      const { address, size } = await store.putObjectStream(source(h));
      assert.equal(address, formatDigest(h.digest()));
      assert.equal(size, MIB * 1024 * 1024);
      const out = await store.getObjectStream(address);
      assert.ok(out !== null);
      const back = createBlake3();
      let n = 0;
      for await (const c of out) {
        assert.ok(c.length <= 1 << 20);
        back.update(c);
        n += c.length;
      }
      assert.equal(n, size);
      assert.equal(formatDigest(back.digest()), address);
    } finally {
      clearInterval(timer);
    }
    const grewMiB = (peak - base) / (1 << 20);
    t.diagnostic(`resident memory grew by ${grewMiB.toFixed(0)} MiB`);
    assert.ok(
      grewMiB < 192,
      `resident memory grew by ${grewMiB.toFixed(0)} MiB for a ${String(MIB)} MiB object`,
    );
  } finally {
    await store.close();
  }
});
