// Crash safety (§13.7): a child process that stores objects, snapshots a workspace and appends to a
// run record is killed with SIGKILL at every write step in turn (SBX_STORE_CRASH_AT), hundreds of
// times. After each kill the store must reopen, no acknowledged segment, object or snapshot may be
// lost, the record must verify from genesis with no torn tail, and every object file must match its
// address. Two independent lanes run in parallel. SBX_CRASH_KILLS sets the total (default 200).
// SBX_CRASH_DIR runs it in that directory instead of /dev/shm; `npm run test:faults` runs it again
// on a real disk directory (SBX_CRASH_REAL_DISK=1 asserts the directory is not on tmpfs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statfsSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { digestBytes, formatDigest, fromHex, utf8, type Digest } from "@sbx/wire";
import { decodeRecord, runGenesis } from "@sbx/sandbox-attest/runrecord";
import { FileStore, recordPaths } from "../../src/store/index.ts";
import { hashStoredObject, verifyStoredTree } from "../../src/snapshot/index.ts";

const KILLS = Number(process.env.SBX_CRASH_KILLS ?? "200");
const ID = runGenesis(digestBytes(utf8("crash-unit")), digestBytes(utf8("crash-grants")));
// SIGKILL kills the process, not the machine: the page cache survives, so tmpfs is a faithful and
// fast place for this test (fsync ordering against power loss is the business of the filesystem).
const scratch = process.env.SBX_CRASH_DIR ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
const TMPFS_MAGIC = 0x01021994;
if (process.env.SBX_CRASH_REAL_DISK === "1" && statfsSync(scratch).type === TMPFS_MAGIC)
  throw new Error(`SBX_CRASH_DIR=${scratch} is on tmpfs, not a real disk`);

interface Acked {
  readonly segs: Map<number, Digest>;
  readonly objs: Set<Digest>;
  readonly snaps: Set<Digest>;
}

function bundleChild(dir: string): string {
  const out = join(dir, "crash-child.mjs");
  // Bundled once so each of the hundreds of children starts as plain node (no TypeScript loader).
  buildSync({
    entryPoints: [join(import.meta.dirname, "crash-child.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: out,
    external: ["@napi-rs/blake-hash"],
    logLevel: "warning",
  });
  return out;
}

function runChild(
  child: string,
  root: string,
  ws: string,
  tag: string,
  env: Record<string, string>,
): Promise<{ out: string; err: string; signal: string | null; code: number | null }> {
  return new Promise((res) => {
    const p = spawn(process.execPath, [child, root, ws, tag], { env: { ...process.env, ...env } });
    let out = "";
    let err = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.stderr.on("data", (b: Buffer) => (err += b.toString()));
    p.on("close", (code, signal) => res({ out, err, signal, code }));
  });
}

function collect(out: string, acked: Acked): void {
  for (const line of out.split("\n")) {
    const [kind, a, b] = line.split(" ");
    if (kind === "seg") acked.segs.set(Number(a), b as Digest);
    if (kind === "obj") acked.objs.add(a as Digest);
    if (kind === "snap") acked.snaps.add(a as Digest);
  }
}

function checkStore(root: string, acked: Acked, what: string): void {
  if (!existsSync(join(root, "sbx-store"))) {
    assert.equal(acked.objs.size, 0, `${what}: store vanished`);
    return;
  }
  const store = FileStore.open(root);
  assert.deepEqual(tempsOfDead(root), [], `${what}: a killed writer's temp files survived the reopen`);
  for (const dir of readdirSync(join(root, "objects")))
    for (const f of readdirSync(join(root, "objects", dir))) {
      const addr = formatDigest(fromHex(dir + f));
      assert.equal(hashStoredObject(store, addr)?.digest, addr, `${what}: object ${addr} is corrupt`);
    }
  for (const a of acked.objs)
    assert.ok(store.getObjectSync(a) !== null, `${what}: acknowledged object ${a} lost`);
  for (const s of acked.snaps) verifyStoredTree(store, s);
  if (!existsSync(recordPaths(root, ID).file)) {
    assert.equal(acked.segs.size, 0, `${what}: record lost`);
    return;
  }
  store.settle(ID);
  const { record } = decodeRecord(readFileSync(recordPaths(root, ID).file)); // strict: no torn tail
  for (const [n, head] of acked.segs)
    assert.equal(record.heads[n], head, `${what}: acknowledged segment ${n} lost or changed`);
}

// The sweep on open removes the temp files of writers that are gone (the children are all dead here).
function tempsOfDead(root: string): string[] {
  return readdirSync(join(root, "tmp")).filter((f) => Number(f.split("-")[0]) !== process.pid);
}

function workspace(dir: string): string {
  const ws = join(dir, "ws");
  mkdirSync(join(ws, "sub"), { recursive: true });
  writeFileSync(join(ws, "a.txt"), "alpha\n");
  writeFileSync(join(ws, "sub", "b.bin"), new Uint8Array(70_000).fill(3));
  writeFileSync(join(ws, "run.sh"), "#!/bin/sh\n");
  chmodSync(join(ws, "run.sh"), 0o755);
  symlinkSync("a.txt", join(ws, "link"));
  return ws;
}

async function lane(
  child: string,
  n: number,
  kills: number,
): Promise<{ kills: number; runs: number; maxStep: number }> {
  const dir = mkdtempSync(join(scratch, `sbx-crash-${n}-`));
  const root = join(dir, "store");
  const ws = workspace(dir);
  const acked: Acked = { segs: new Map(), objs: new Set(), snaps: new Set() };
  let killed = 0;
  let runs = 0;
  let maxStep = 0;
  for (let k = 1; killed < kills; k++) {
    const r = await runChild(child, root, ws, `${n}-${runs++}`, { SBX_STORE_CRASH_AT: String(k) });
    collect(r.out, acked);
    if (r.signal === "SIGKILL") killed++;
    else {
      assert.equal(r.code, 0, r.err);
      assert.ok(r.out.includes("done"));
      maxStep = Math.max(maxStep, k - 1);
      k = 0; // every step of this workload was hit; start the sweep again on the grown store
    }
    checkStore(root, acked, `lane ${n} kill at step ${k}`);
  }
  return { kills: killed, runs, maxStep };
}

test(
  `SIGKILL at every write step of append, snapshot and object store (${KILLS} kills)`,
  { timeout: 600_000 },
  async () => {
    const child = bundleChild(mkdtempSync(join(scratch, "sbx-crash-bin-")));
    const results = await Promise.all([
      lane(child, 0, Math.ceil(KILLS / 2)),
      lane(child, 1, Math.floor(KILLS / 2)),
    ]);
    const total = results.reduce((s, r) => s + r.kills, 0);
    assert.ok(total >= KILLS);
    console.log(
      `crash (${scratch}): ${total} kills over ${results.reduce((s, r) => s + r.runs, 0)} runs; steps per full workload ≤ ${Math.max(...results.map((r) => r.maxStep))}`,
    );
  },
);
