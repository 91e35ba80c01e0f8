// Run record benchmarks (§13). Anchors are measured in the same run:
//  - append with fsync (claim linked, line written, one fsync) at 10, 1,000 and 10,000 segments vs one
//    write+fsync of the same line to a plain file;
//  - head-only verification of a 10,000-segment record vs raw BLAKE3 of the same hash inputs;
//  - full verification (every attestation's Ed25519 signature) vs raw Ed25519 verifies of the same messages;
//  - snapshot of a 1 GiB / 10,000-file workspace vs b3sum over the same files (1 thread and default).
// SBX_BENCH_SNAPSHOT_MIB and SBX_BENCH_FILES shrink the workspace for quick runs.
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { randomFillSync } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  addressOf,
  blake3,
  canonicalBytes,
  concatBytes,
  digestBytes,
  fromBase64,
  parseDigest,
  pae,
  publicKeyFromDidKey,
  testKey,
  utf8,
  verifyEd25519,
  type Digest,
  type Envelope,
} from "@sbx/wire";
import { signAttestation } from "@sbx/sandbox-attest/attestation";
import { decodeRecord, encodeRecord, RunRecord, type Segment } from "@sbx/sandbox-attest/runrecord";
import { FileStore, recordPaths, verifyRecordFiles } from "@sbx/host/store";
import { snapshotDir } from "@sbx/host/snapshot";
import { gbps, median, rate, row, timeCommand, timeRuns } from "./measure.ts";

const MiB = 1024 * 1024;
// The unit descriptor the attestations name (their subject, §7.1), and its address.
const UNIT_DESCRIPTOR = { bench: "unit" };
const UNIT = addressOf(UNIT_DESCRIPTOR);
const GRANTS = digestBytes(utf8("bench-grants"));
const exec = (i: number): Segment => ({ kind: "executed", attestation: digestBytes(utf8(`att ${i}`)) });

// A store holding a record of `len` executed segments, written directly in its wire form.
function storeWithRecord(dir: string, len: number): { store: FileStore; id: Digest; head: Digest } {
  const r = RunRecord.create(UNIT, GRANTS);
  for (let i = 0; i < len; i++) r.append(exec(i));
  const store = FileStore.open(join(dir, `append-${len}`), { create: true });
  const { file, claims } = recordPaths(store.root, r.genesis);
  mkdirSync(claims, { recursive: true });
  const fd = openSync(file, "w");
  writeSync(fd, encodeRecord(r));
  fsyncSync(fd);
  closeSync(fd);
  return { store, id: r.genesis, head: r.head };
}

const secondsSince = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e9;

async function appendBench(dir: string): Promise<void> {
  const K = 200;
  const line = canonicalBytes({ head: GRANTS, n: 1, segment: exec(0) });
  const fd = openSync(join(dir, "plain"), "w");
  console.log(
    `append with fsync, median of ${K} appends at each length, each paired with one anchor write (same conditions):`,
  );
  for (const len of [10, 1_000, 10_000]) {
    const { store, id, head: h0 } = storeWithRecord(dir, len);
    // The first append of a process verifies the record from genesis once; later ones continue from the head.
    let head = h0;
    const first = timed(() => (head = store.appendSegmentSync(id, h0, exec(len))));
    let t0: bigint;
    const plain: number[] = [];
    const appends: number[] = [];
    for (let i = 0; i < K; i++) {
      t0 = process.hrtime.bigint();
      writeSync(fd, line);
      fsyncSync(fd);
      plain.push(secondsSince(t0));
      t0 = process.hrtime.bigint();
      head = await store.appendSegment(id, head, exec(len + 1 + i));
      appends.push(secondsSince(t0));
    }
    const tPlain = median(plain);
    const tAppend = median(appends);
    row(`plain write + fsync of one line (anchor)`, rate(1 / tPlain));
    row(`FileStore.appendSegment at ${len} segments`, rate(1 / tAppend), tPlain / tAppend, "anchor");
    row(`  first append of the process (verifies ${len})`, `${(first.wall * 1e3).toFixed(2)} ms`);
    console.log(`    (${(first.cpu * 1e3).toFixed(2)} ms CPU)`);
  }
  closeSync(fd);
}

/** Wall and CPU seconds (user + system of this process) of one call of `fn`. */
function timed(fn: () => void): { wall: number; cpu: number } {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  fn();
  const wall = secondsSince(t0);
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1e6 };
}

/**
 * paired runs `subject` and `anchor` alternately `runs` times (after one warm-up of each), so both
 * see the same load, and returns the median wall and CPU seconds of each. CPU time is what a
 * single-threaded computation costs, without the time other processes held the core.
 */
function paired(
  runs: number,
  subject: () => void,
  anchor: () => void,
): { subject: { wall: number; cpu: number }; anchor: { wall: number; cpu: number } } {
  subject();
  anchor();
  const s: { wall: number; cpu: number }[] = [];
  const a: { wall: number; cpu: number }[] = [];
  for (let i = 0; i < runs; i++) {
    s.push(timed(subject));
    a.push(timed(anchor));
  }
  const med = (xs: { wall: number; cpu: number }[]) => ({
    wall: median(xs.map((x) => x.wall)),
    cpu: median(xs.map((x) => x.cpu)),
  });
  return { subject: med(s), anchor: med(a) };
}

function headOnlyBench(): void {
  const N = 10_000;
  const RUNS = 21;
  const r = RunRecord.create(UNIT, GRANTS);
  for (let i = 0; i < N; i++) r.append(exec(i));
  const bytes = encodeRecord(r);
  const inputs = r.segments.map((s, i) => concatBytes(parseDigest(r.heads[i]!), canonicalBytes(s)));
  const p = paired(
    RUNS,
    () => decodeRecord(bytes),
    () => inputs.forEach((x) => blake3(x)),
  );
  const tFile = timeRuns(5, () => blake3(bytes));
  console.log(
    `head-only verification, ${N} segments (${(bytes.length / MiB).toFixed(2)} MiB wire form), median of ${RUNS} runs, each paired with one anchor run:`,
  );
  row("raw BLAKE3 of the same per-segment inputs (anchor)", rate(N / p.anchor.wall));
  row(
    "decodeRecord (parse, canonical check, phases, heads)",
    rate(N / p.subject.wall),
    p.anchor.wall / p.subject.wall,
    "anchor",
  );
  row("  the same in CPU time: anchor", rate(N / p.anchor.cpu));
  row("  decodeRecord", rate(N / p.subject.cpu), p.anchor.cpu / p.subject.cpu, "anchor (CPU time)");
  row("BLAKE3 of the whole file in one call", gbps(bytes.length / tFile));
}

async function fullBench(dir: string): Promise<void> {
  const N = 300;
  const store = FileStore.open(join(dir, "full-store"), { create: true });
  const host = testKey("host");
  const id = await store.createRecord(UNIT, GRANTS);
  let head = id;
  const envs: Envelope[] = [];
  for (let i = 0; i < N; i++) {
    const env = signAttestation(
      {
        unit_id: UNIT,
        grants_id: GRANTS,
        manifest: digestBytes(utf8("m")),
        exec_policy: digestBytes(utf8("p")),
        energy: {
          receipt: await store.putObject(utf8(`receipt ${i}`)),
          total_uj: "1000",
          provenance: "estimated",
        },
        journal: { root: digestBytes(utf8(`j${i}`)), events: 1 },
        outcome: { status: "exited", exit_code: 0 },
        interval: { start_ms: i, end_ms: i + 1 },
        level: "S5",
        run_head: head,
      },
      host,
      UNIT_DESCRIPTOR,
    );
    envs.push(env);
    head = await store.appendSegment(id, head, { kind: "executed", attestation: await store.putSigned(env) });
  }
  const path = store.recordPath(id);
  const tFull = timeRuns(3, () => {
    if (!verifyRecordFiles(path, store).valid) throw new Error("bench record does not verify");
  });
  const pk = publicKeyFromDidKey(host.did);
  const msgs = envs.map(
    (e) => [pae(e.payloadType, fromBase64(e.payload)!), fromBase64(e.signatures[0]!.sig)!] as const,
  );
  const tEd = timeRuns(3, () => msgs.forEach(([m, s]) => verifyEd25519(pk, m, s)));
  console.log(`full verification from files, ${N} executed segments with signed attestations, median of 3:`);
  row("raw Ed25519 verify of the same messages (anchor)", rate(N / tEd));
  row("verifyRecordFiles (record + every attestation)", rate(N / tFull), tEd / tFull, "anchor");
}

function makeWorkspace(dir: string, totalBytes: number, files: number): string {
  const ws = join(dir, "ws");
  const per = Math.floor(totalBytes / files);
  const buf = new Uint8Array(per);
  for (let i = 0; i < files; i++) {
    const sub = join(ws, `d${String(Math.floor(i / 100)).padStart(3, "0")}`);
    if (i % 100 === 0) mkdirSync(sub, { recursive: true });
    randomFillSync(buf);
    writeFileSync(join(sub, `f${i}`), buf);
  }
  return ws;
}

function snapshotBench(dir: string): void {
  const mib = Number(process.env.SBX_BENCH_SNAPSHOT_MIB ?? 1024);
  const files = Number(process.env.SBX_BENCH_FILES ?? 10_000);
  const ws = makeWorkspace(dir, mib * MiB, files);
  const names = Array.from(
    { length: files },
    (_, i) => `d${String(Math.floor(i / 100)).padStart(3, "0")}/f${i}`,
  );
  const b3one = timeCommand(3, "sh", [
    "-c",
    `cd ${ws} && exec b3sum --num-threads 1 "$@" > /dev/null`,
    "b3sum",
    ...names,
  ]);
  // Where file mmap is slow (some sandboxed kernels) b3sum's read(2) path is the fairer anchor.
  const b3read = timeCommand(3, "sh", [
    "-c",
    `cd ${ws} && exec b3sum --no-mmap "$@" > /dev/null`,
    "b3sum",
    ...names,
  ]);
  const b3all = timeCommand(3, "sh", ["-c", `cd ${ws} && exec b3sum "$@" > /dev/null`, "b3sum", ...names]);
  const store = FileStore.open(join(dir, "snap-store"), { create: true });
  const t0 = process.hrtime.bigint();
  const first = snapshotDir(store, ws);
  const tFirst = Number(process.hrtime.bigint() - t0) / 1e9;
  const tAgain = timeRuns(1, () => snapshotDir(store, ws));
  const bytes = first.bytes;
  console.log(
    `snapshot of a ${mib} MiB / ${files}-file workspace (same files, same conditions for all; median of 3 for b3sum):`,
  );
  if (b3one === null || b3all === null) {
    console.log("  b3sum not installed: no anchor (apt-get install -y b3sum)");
    return;
  }
  row("b3sum --num-threads 1 (anchor)", gbps(bytes / b3one));
  row("b3sum, default threads", gbps(bytes / b3all), b3one / b3all, "anchor");
  if (b3read !== null)
    row("b3sum --no-mmap (read(2), one thread)", gbps(bytes / b3read), b3one / b3read, "anchor");
  row("snapshotDir, first (hash + copy + fsync each)", gbps(bytes / tFirst), b3one / tFirst, "anchor");
  row("snapshotDir, unchanged tree (hash only)", gbps(bytes / tAgain), b3one / tAgain, "anchor");
  console.log(
    `  seconds: b3sum-1t ${b3one.toFixed(2)}, b3sum ${b3all.toFixed(2)}, first ${tFirst.toFixed(2)}, again ${tAgain.toFixed(2)}`,
  );
}

export default async function runrecordBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "sbx-bench-rr-"));
  try {
    await appendBench(dir);
    headOnlyBench();
    await fullBench(dir);
    snapshotBench(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
