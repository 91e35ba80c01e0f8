// The PostgreSQL store (§13.7) against PostgreSQL itself, both measured in the same run on the same
// throwaway cluster (fsync on):
//  - appends/s: PgStore.appendSegment (read and verify the record from genesis, §13.3 checks, one
//    conditional insert, one transaction) from 1 and 8 concurrent writers, each on its own run of at
//    most 50 segments, vs `pgbench` running a one-row INSERT transaction with 1 and 8 clients;
//  - verified reads/s: readRun of a 20-segment run (rows read in one transaction, every head
//    recomputed, every row checked) from 1 and 8 readers, vs `pgbench` running a one-row SELECT;
//  - object upload: a workspace's files (SBX_BENCH_STORE_MIB, default 1024 MiB, in
//    SBX_BENCH_STORE_FILES, default 10,000, files) streamed into PgStore vs snapshotDir into the
//    file store (which also hashes and writes every file, plus the directory objects).
// SBX_BENCH_STORE_SECONDS (default 5) is the length of each timed phase.
import { spawnSync } from "node:child_process";
import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { randomFillSync } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import { readRun } from "@sbx/sandbox-attest/store";
import { FileStore } from "@sbx/host/store";
import { snapshotDir } from "@sbx/host/snapshot";
import { CHUNK_BYTES, pgBin, PgStore, startCluster, stopCluster, type TestCluster } from "@sbx/host/pg";
import { gbps, rate, row } from "./measure.ts";

const SECONDS = Number(process.env["SBX_BENCH_STORE_SECONDS"] ?? "5");
const d = (s: string): Digest => digestBytes(utf8(s));

/** pgbench runs `script` for SECONDS with `clients` clients and returns its transactions per second. */
function pgbench(c: TestCluster, script: string, clients: number): number {
  const file = join(c.dir, `bench-${String(clients)}.sql`);
  writeFileSync(file, script);
  const args = [
    "-n",
    "-f",
    file,
    "-c",
    String(clients),
    "-j",
    String(Math.min(clients, 2)),
    "-T",
    String(SECONDS),
  ];
  const r = spawnSync(
    pgBin("pgbench"),
    [...args, "-h", "127.0.0.1", "-p", String(c.port), "-U", "sbx", "sbx"],
    {
      encoding: "utf8",
    },
  );
  const m = /tps = ([0-9.]+)/.exec(r.stdout);
  if (r.status !== 0 || m === null) throw new Error(`pgbench failed: ${r.stderr}`);
  return Number(m[1]);
}

/** lanes runs `lanes` concurrent loops of `op` for SECONDS and returns operations per second. */
async function lanes(n: number, op: (lane: number, i: number) => Promise<void>): Promise<number> {
  const end = Date.now() + SECONDS * 1000;
  let count = 0;
  const t = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: n }, async (_, lane) => {
      for (let i = 0; Date.now() < end; i++) {
        await op(lane, i);
        count++;
      }
    }),
  );
  return count / (Number(process.hrtime.bigint() - t) / 1e9);
}

async function appends(store: PgStore, writers: number): Promise<number> {
  const state = Array.from({ length: writers }, () => ({ id: d(""), head: d(""), n: 50 }));
  return lanes(writers, async (lane, i) => {
    const s = state[lane]!;
    if (s.n >= 50) {
      s.id = s.head = await store.createRecord(
        d(`bench ${String(writers)} ${String(lane)} ${String(i)} ${String(Math.random())}`),
        d("g"),
      );
      s.n = 0;
    }
    s.head = await store.appendSegment(s.id, s.head, { kind: "executed", attestation: d(String(i)) });
    s.n++;
  });
}

async function reads(store: PgStore, readers: number): Promise<number> {
  const id = await store.createRecord(d(`read bench ${String(Math.random())}`), d("g"));
  let head = id;
  for (let i = 0; i < 20; i++)
    head = await store.appendSegment(id, head, { kind: "executed", attestation: d(String(i)) });
  return lanes(readers, async () => {
    if ((await readRun(store, id)).head !== head) throw new Error("read a different head");
  });
}

function workspace(mib: number, files: number): string {
  const ws = mkdtempSync(join(tmpdir(), "sbx-bench-ws-"));
  const per = Math.max(1, Math.floor((mib * 1024 * 1024) / files));
  const buf = Buffer.alloc(per);
  for (let i = 0; i < files; i++) {
    const sub = join(ws, `d${String(i % 100)}`);
    if (i < 100) mkdirSync(sub);
    randomFillSync(buf);
    writeFileSync(join(sub, `f${String(i)}`), buf);
  }
  return ws;
}

async function uploads(store: PgStore, c: TestCluster): Promise<void> {
  const mib = Number(process.env["SBX_BENCH_STORE_MIB"] ?? "1024");
  const files = Number(process.env["SBX_BENCH_STORE_FILES"] ?? "10000");
  const ws = workspace(mib, files);
  try {
    const fsDir = mkdtempSync(join(c.dir, "..", "sbx-bench-fs-"));
    let t = process.hrtime.bigint();
    snapshotDir(FileStore.open(join(fsDir, "s"), { create: true }), ws);
    const fileS = Number(process.hrtime.bigint() - t) / 1e9;
    rmSync(fsDir, { recursive: true, force: true });
    t = process.hrtime.bigint();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = next++; i < files; i = next++) {
          const p = join(ws, `d${String(i % 100)}`, `f${String(i)}`);
          await store.putObjectStream(createReadStream(p, { highWaterMark: CHUNK_BYTES }));
        }
      }),
    );
    const pgS = Number(process.hrtime.bigint() - t) / 1e9;
    const bytes = mib * 1024 * 1024;
    row(`snapshot ${String(mib)} MiB / ${String(files)} files → file store`, gbps(bytes / fileS));
    row(`upload the same files → PostgreSQL (4 streams)`, gbps(bytes / pgS), fileS / pgS, "file store");
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

export default async function main(): Promise<void> {
  const c = await startCluster();
  try {
    await PgStore.init(c.url);
    const store = await PgStore.open(c.url, { max: 8 });
    const setup = spawnSync(pgBin("psql"), [
      "-h",
      "127.0.0.1",
      "-p",
      String(c.port),
      "-U",
      "sbx",
      "-q",
      "-c",
      "CREATE TABLE bench_rows (id bigserial PRIMARY KEY, k bytea NOT NULL UNIQUE, v bytea NOT NULL); INSERT INTO bench_rows (k, v) SELECT sha224(i::text::bytea), repeat('x', 200)::bytea FROM generate_series(1, 20000) i",
      "sbx",
    ]);
    if (setup.status !== 0) throw new Error(`psql: ${String(setup.stderr)}`);
    const insert =
      "INSERT INTO bench_rows (k, v) VALUES (sha224(random()::text::bytea), repeat('x', 200)::bytea);\n";
    const select = "\\set id random(1, 20000)\nSELECT k, v FROM bench_rows WHERE id = :id;\n";
    console.log(`  PostgreSQL ${c.url}, fsync on, ${String(SECONDS)} s per figure`);
    for (const n of [1, 8]) {
      const anchor = pgbench(c, insert, n);
      const ours = await appends(store, n);
      row(`pgbench one-row INSERT, ${String(n)} client(s)`, rate(anchor));
      row(`PgStore appendSegment, ${String(n)} writer(s)`, rate(ours), ours / anchor, "pgbench insert");
    }
    for (const n of [1, 8]) {
      const anchor = pgbench(c, select, n);
      const ours = await reads(store, n);
      row(`pgbench one-row SELECT, ${String(n)} client(s)`, rate(anchor));
      row(
        `PgStore verified readRun (20 segments), ${String(n)} reader(s)`,
        rate(ours),
        ours / anchor,
        "pgbench select",
      );
    }
    await uploads(store, c);
    await store.close();
  } finally {
    stopCluster(c);
  }
}
