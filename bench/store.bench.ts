// The PostgreSQL store (§13.7) against PostgreSQL itself, both measured in the same run on the same
// throwaway cluster (fsync on), with the same durability (pgbench gets the store's own
// synchronous_commit through PGOPTIONS), the same number of connections and one client thread
// each (pgbench -j 1; Node is one thread). Every figure is the median of ROUNDS timed phases, the
// anchor and ours alternating.
//  - appends/s: PgStore.appendSegment (the §13.3 checks on the writer's verified state, one
//    conditional insert naming the head it extends, its own transaction) from 1 and 8 concurrent
//    writers, each on its own run of at most 50 segments, vs `pgbench` inserting one row of the
//    same shape (a table like sbx_segments: the same columns and sizes, the same three unique
//    indexes and foreign key) per transaction; also shown against a plain one-row INSERT;
//  - verified reads/s: readRun of a 20-segment run from 1 and 8 readers, warm (the reader holds the
//    verified record: one statement, the header and last held row checked by digest on every read,
//    every held row on every 16th: reader.ts) and cold (a new reader every time: verified from
//    genesis), vs `pgbench` running the same read (the header and the 20 rows)
//    without verifying; also shown against a one-row SELECT. For the cold phases, this process's
//    CPU per read and its share of the wall time (near 100% when the one Node thread is the limit),
//    pgbench running the cold read's own statement (the server's side of it, no verifying client),
//    and the server's CPU per cold read (its processes' CPU in /proc over the phase: on a machine
//    of few cores the client's and the server's CPU together bound the rate);
//  - object upload: a workspace's files (SBX_BENCH_STORE_MIB, default 1024 MiB, in
//    SBX_BENCH_STORE_FILES, default 10,000, files) streamed into PgStore vs snapshotDir into the
//    file store (which also hashes and writes every file, plus the directory objects).
// SBX_BENCH_STORE_SECONDS (default 5) is the length of each timed phase, SBX_BENCH_STORE_ROUNDS
// (default 3) how many; SBX_BENCH_STORE_QUICK=1 is a short run (1 s × 1, 64 MiB / 500 files).
import { spawnSync } from "node:child_process";
import {
  createReadStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { randomFillSync } from "node:crypto";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes, parseDigest, utf8, type Digest } from "@sbx/wire";
import { readRun } from "@sbx/sandbox-attest/store";
import { FileStore } from "@sbx/host/store";
import { snapshotDir } from "@sbx/host/snapshot";
import {
  CHUNK_BYTES,
  COLD_READ_SQL,
  pgBin,
  PgStore,
  startCluster,
  stopCluster,
  type TestCluster,
} from "@sbx/host/pg";
import { gbps, median, rate, row } from "./measure.ts";

const QUICK = process.env["SBX_BENCH_STORE_QUICK"] === "1";
const SECONDS = Number(process.env["SBX_BENCH_STORE_SECONDS"] ?? (QUICK ? "1" : "5"));
const ROUNDS = Number(process.env["SBX_BENCH_STORE_ROUNDS"] ?? (QUICK ? "1" : "3"));
const d = (s: string): Digest => digestBytes(utf8(s));

/** psql runs `sql` on the cluster's database. */
function psql(c: TestCluster, sql: string): void {
  const r = spawnSync(
    pgBin("psql"),
    ["-h", "127.0.0.1", "-p", String(c.port), "-U", "sbx", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql, "sbx"],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
}

/**
 * pgbench runs `script` for SECONDS with `clients` connections on one thread, with the store's
 * synchronous_commit, and returns its transactions per second.
 */
function pgbench(c: TestCluster, script: string, clients: number, syncCommit: string): number {
  const file = join(c.dir, `bench-${String(clients)}.sql`);
  writeFileSync(file, script);
  const args = ["-n", "-f", file, "-c", String(clients), "-j", "1", "-T", String(SECONDS)];
  const r = spawnSync(
    pgBin("pgbench"),
    [...args, "-h", "127.0.0.1", "-p", String(c.port), "-U", "sbx", "sbx"],
    { encoding: "utf8", env: { ...process.env, PGOPTIONS: `-c synchronous_commit=${syncCommit}` } },
  );
  const m = /tps = ([0-9.]+)/.exec(r.stdout);
  if (r.status !== 0 || m === null) throw new Error(`pgbench failed: ${r.stderr}`);
  return Number(m[1]);
}

/** This process's CPU in the last `lanes` phase: µs per operation, and the share of the wall time. */
const lastCpu = { perOp: 0, busy: 0, serverPerOp: 0 };

/** The cluster whose server processes' CPU `lanes` also measures (µs), when set. */
let measured: TestCluster | null = null;

/**
 * serverCpuUs is the CPU (user + system, µs) used so far by the server processes of `c`: its
 * postmaster (data/postmaster.pid) and every process whose parent it is (the backends), from
 * /proc/PID/stat. A backend that ended during the phase is not counted.
 */
function serverCpuUs(c: TestCluster): number {
  const tick = 1e6 / 100; // USER_HZ is 100 on Linux
  const master = Number(readFileSync(join(c.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  let total = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pid) !== master && Number(f[1]) !== master) continue;
    total += (Number(f[11]) + Number(f[12])) * tick;
  }
  return total;
}

/** lanes runs `lanes` concurrent loops of `op` for SECONDS and returns operations per second. */
async function lanes(n: number, op: (lane: number, i: number) => Promise<void>): Promise<number> {
  const end = Date.now() + SECONDS * 1000;
  let count = 0;
  const server = measured === null ? 0 : serverCpuUs(measured);
  const cpu = process.cpuUsage();
  const t = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: n }, async (_, lane) => {
      for (let i = 0; Date.now() < end; i++) {
        await op(lane, i);
        count++;
      }
    }),
  );
  const wallUs = Number(process.hrtime.bigint() - t) / 1e3;
  const used = process.cpuUsage(cpu);
  lastCpu.perOp = (used.user + used.system) / count;
  lastCpu.busy = (used.user + used.system) / wallUs;
  lastCpu.serverPerOp = measured === null ? 0 : (serverCpuUs(measured) - server) / count;
  return count / (wallUs / 1e6);
}

/** rounds measures `anchor` and `ours` alternately ROUNDS times and returns both medians. */
async function rounds(
  anchor: () => number,
  ours: () => Promise<number>,
): Promise<{ anchor: number; ours: number }> {
  const a: number[] = [];
  const o: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    a.push(anchor());
    o.push(await ours());
  }
  return { anchor: median(a), ours: median(o) };
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

/** A 20-segment run for the read figures. */
async function readTarget(store: PgStore): Promise<{ id: Digest; head: Digest }> {
  const id = await store.createRecord(d(`read bench ${String(Math.random())}`), d("g"));
  let head = id;
  for (let i = 0; i < 20; i++)
    head = await store.appendSegment(id, head, { kind: "executed", attestation: d(String(i)) });
  return { id, head };
}

/** reads: warm readers share `store` (which holds the verified record); cold ones open a store each time. */
async function reads(store: PgStore, url: string, readers: number, id: Digest, head: Digest, warm: boolean) {
  if (warm)
    return lanes(readers, async () => {
      if ((await readRun(store, id)).head !== head) throw new Error("read a different head");
    });
  // A cold read: a reader that holds nothing (a new PgStore's reader on the same pool size).
  const pool = await Promise.all(Array.from({ length: readers }, () => PgStore.open(url, { max: 1 })));
  try {
    return await lanes(readers, async (lane) => {
      const fresh = pool[lane]!;
      if ((await fresh.readRecordBytes(id)) === null) throw new Error("record gone");
      fresh.forgetVerified(id);
    });
  } finally {
    await Promise.all(pool.map((s) => s.close()));
  }
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
  const mib = Number(process.env["SBX_BENCH_STORE_MIB"] ?? (QUICK ? "64" : "1024"));
  const files = Number(process.env["SBX_BENCH_STORE_FILES"] ?? (QUICK ? "500" : "10000"));
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
    row(
      `snapshot ${String(mib)} MiB / ${String(files)} files → file store`,
      `${gbps(bytes / fileS)} ${fileS.toFixed(1)} s`,
    );
    row(
      `upload the same files → PostgreSQL (4 streams)`,
      `${gbps(bytes / pgS)} ${pgS.toFixed(1)} s`,
      fileS / pgS,
      "file store",
    );
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

// A table of sbx_segments' shape (columns, sizes, unique indexes, foreign key) for the insert
// anchor, a plain table for the one-row references.
const ANCHOR_SCHEMA = `
CREATE TABLE bench_records (id bytea PRIMARY KEY, header bytea NOT NULL);
INSERT INTO bench_records SELECT sha256(i::text::bytea), repeat('h', 200)::bytea FROM generate_series(1, 64) i;
CREATE SEQUENCE bench_seq;
CREATE TABLE bench_segments (
  record bytea NOT NULL REFERENCES bench_records, seq integer NOT NULL CHECK (seq >= 1),
  prev bytea NOT NULL, head bytea NOT NULL, line bytea NOT NULL, token uuid NOT NULL UNIQUE,
  PRIMARY KEY (record, seq), UNIQUE (record, prev));
CREATE TABLE bench_rows (id bigserial PRIMARY KEY, k bytea NOT NULL UNIQUE, v bytea NOT NULL);
INSERT INTO bench_rows (k, v) SELECT sha224(i::text::bytea), repeat('x', 200)::bytea FROM generate_series(1, 20000) i;`;

export default async function main(): Promise<void> {
  const c = await startCluster();
  measured = c;
  try {
    await PgStore.init(c.url);
    const store = await PgStore.open(c.url, { max: 8 });
    psql(c, ANCHOR_SCHEMA);
    const sync = (await store.pool.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s"))
      .rows[0]!.s;
    // One segment row as the store writes it, for the anchor's line size.
    const probe = await store.createRecord(d("probe"), d("g"));
    await store.appendSegment(probe, probe, { kind: "executed", attestation: d("0") });
    const lineBytes = (
      await store.pool.query<{ n: number }>("SELECT max(length(line)) AS n FROM sbx_segments")
    ).rows[0]!.n;
    const segInsert =
      "INSERT INTO bench_segments (record, seq, prev, head, line, token) VALUES " +
      `(sha256((1 + :client_id % 64)::text::bytea), nextval('bench_seq'), sha256(random()::text::bytea), sha256(random()::text::bytea), repeat('x', ${String(lineBytes)})::bytea, gen_random_uuid());\n`;
    const plainInsert =
      "INSERT INTO bench_rows (k, v) VALUES (sha224(random()::text::bytea), repeat('x', 200)::bytea);\n";
    const plainSelect = "\\set id random(1, 20000)\nSELECT k, v FROM bench_rows WHERE id = :id;\n";
    console.log(
      `  load average at start ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")} (${String(cpus().length)} CPUs)`,
    );
    console.log(
      `  PostgreSQL ${c.url}, fsync on, synchronous_commit=${sync} for both, segment line ${String(lineBytes)} bytes, ` +
        `medians of ${String(ROUNDS)} × ${String(SECONDS)} s`,
    );
    for (const n of [1, 8]) {
      const plain = await rounds(
        () => pgbench(c, plainInsert, n, sync),
        () => Promise.resolve(0),
      );
      const r = await rounds(
        () => pgbench(c, segInsert, n, sync),
        () => appends(store, n),
      );
      row(`pgbench plain one-row INSERT, ${String(n)} client(s)`, rate(plain.anchor));
      row(`pgbench segment-shaped INSERT, ${String(n)} client(s)`, rate(r.anchor));
      row(
        `PgStore appendSegment, ${String(n)} writer(s)`,
        rate(r.ours),
        r.ours / r.anchor,
        "pgbench segment insert",
      );
      row("", "", r.ours / plain.anchor, "pgbench plain insert");
    }
    const { id, head } = await readTarget(store);
    const hex = Buffer.from(parseDigest(id)).toString("hex");
    const sameRead = `SELECT r.header, s.seq, s.prev, s.head, s.line FROM sbx_records r LEFT JOIN sbx_segments s ON s.record = r.id WHERE r.id = '\\x${hex}'::bytea ORDER BY s.seq;\n`;
    // Our own cold read's statement under pgbench: the server's side of it, without our client.
    const ourRead = `${COLD_READ_SQL.replaceAll("$1", `'\\x${hex}'::bytea`).replace(/\s+/g, " ")};\n`;
    for (const n of [1, 8]) {
      const plain = await rounds(
        () => pgbench(c, plainSelect, n, sync),
        () => Promise.resolve(0),
      );
      const warm = await rounds(
        () => pgbench(c, sameRead, n, sync),
        () => reads(store, c.url, n, id, head, true),
      );
      const cold = await rounds(
        () => pgbench(c, ourRead, n, sync),
        () => reads(store, c.url, n, id, head, false),
      );
      const cpu = { ...lastCpu }; // the last cold phase: is this one Node thread the limit?
      row(`pgbench one-row SELECT, ${String(n)} client(s)`, rate(plain.anchor));
      row(`pgbench the record's 21 rows, unverified, ${String(n)} c.`, rate(warm.anchor));
      row(
        `PgStore readRun warm (held, 20 seg), ${String(n)} reader(s)`,
        rate(warm.ours),
        warm.ours / warm.anchor,
        "pgbench same rows",
      );
      row("", "", warm.ours / plain.anchor, "pgbench one-row select");
      row(
        `PgStore read cold (from genesis), ${String(n)} reader(s)`,
        rate(cold.ours),
        cold.ours / warm.anchor,
        "pgbench same rows",
      );
      row("", "", cold.ours / plain.anchor, "pgbench one-row select");
      row(`  pgbench running that cold read's statement, ${String(n)} c.`, rate(cold.anchor));
      row(
        `  Node thread, last cold phase: CPU per read, busy`,
        `${cpu.perOp.toFixed(0)} µs ${(100 * cpu.busy).toFixed(0)}%`,
      );
      row(`  PostgreSQL, last cold phase: server CPU per read`, `${cpu.serverPerOp.toFixed(0)} µs`);
    }
    await uploads(store, c);
    console.log(
      `  load average at end ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    );
    await store.close();
  } finally {
    stopCluster(c);
  }
}
