// `sbx runs` on PostgreSQL (issue 18): every run listed and verified from the database directly
// (verifyPgRun: the record by the database reader, the objects fetched into memory in batches,
// leaves hashed on the way through) against the anchor, the way `sbx runs` did it before: each run
// mirrored with every object its verification asks for into a fresh host-local staging store
// (SharedRunStore.mirrorRun), then verified there. Both in this run, on the same database.
// The runs: SBX_BENCH_PGVIEWS_RUNS (default 6), each executed → suspended with a snapshot of 40
// small files in 10 directories and a kept journal of 64 events (§13.7.3).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, canonicalBytes, digestBytes, testKey, utf8, type Digest } from "@sbx/wire";
import { signAttestation } from "@sbx/sandbox-attest/attestation";
import { Journal, journalNodes } from "@sbx/sandbox-attest/journal";
import { verifyRun } from "@sbx/sandbox-attest/store";
import { FileStore, storeObjects } from "@sbx/host/store";
import { snapshotDir } from "@sbx/host/snapshot";
import {
  copyStore,
  PgStore,
  SharedRunStore,
  startCluster,
  stopCluster,
  verifyPgRun,
  type TestCluster,
} from "@sbx/host/pg";
import { median, row } from "./measure.ts";

const HOST = testKey("host");
const GRANTS = digestBytes(utf8("bench-pgviews-grants"));

async function makeRun(store: FileStore, dir: string, i: number): Promise<Digest> {
  const unitDescriptor = { bench: "pgviews", run: i };
  const unit = addressOf(unitDescriptor);
  const ws = join(dir, `ws-${i}`);
  for (let d = 0; d < 10; d++) {
    mkdirSync(join(ws, `d${d}`), { recursive: true });
    for (let f = 0; f < 4; f++)
      writeFileSync(join(ws, `d${d}`, `f${f}.txt`), `run ${i} dir ${d} file ${f}\n`);
  }
  const manifest = await store.putObject(canonicalBytes({ image: `debian@sha256:${"e".repeat(64)}` }));
  const fsRoot = snapshotDir(store, ws).fs_root;
  const j = new Journal();
  for (let e = 0; e < 64; e++)
    j.append({ type: "file.write", path: `d${e % 10}/f${e}.txt`, digest: GRANTS, size: String(e) });
  for (const n of journalNodes(j.events)) store.putObjectSync(n.bytes, false);
  store.syncPending();
  const head = j.head();
  const id = await store.createRecord(unit, GRANTS);
  const receipt = await store.putObject(canonicalBytes({ receipt: "bench", total_uj: "1000", run: i }));
  const att = await store.putSigned(
    signAttestation(
      {
        unit_id: unit,
        grants_id: GRANTS,
        manifest,
        exec_policy: digestBytes(utf8("policy")),
        energy: { receipt, total_uj: "1000", provenance: "estimated" },
        journal: { root: head.root, events: head.size },
        outcome: { status: "exited", exit_code: 0 },
        interval: { start_ms: 1, end_ms: 2 },
        level: "S5",
        run_head: id,
      },
      HOST,
      unitDescriptor,
    ),
  );
  const h = await store.appendSegment(id, id, { kind: "executed", attestation: att });
  await store.appendSegment(id, h, { kind: "suspended", snapshot: { fs_root: fsRoot, manifest }, at_ms: 3 });
  return id;
}

export default async function bench(): Promise<void> {
  const runs = Number(process.env["SBX_BENCH_PGVIEWS_RUNS"] ?? 6);
  const dir = mkdtempSync(join(tmpdir(), "sbx-bench-pgviews-"));
  let cluster: TestCluster | undefined;
  try {
    cluster = await startCluster();
    await PgStore.init(cluster.url);
    const files = FileStore.open(join(dir, "files"), { create: true });
    for (let i = 0; i < runs; i++) await makeRun(files, dir, i);
    const pg = await PgStore.open(cluster.url);
    await copyStore(files, pg);
    await pg.close();
    const url = cluster.url;

    const mirrored = async () => {
      const local = mkdtempSync(join(dir, "local-"));
      const s = await SharedRunStore.open(url, local);
      try {
        for (const id of await s.recordIds()) {
          await s.mirrorRun(id);
          const v = verifyRun(s.local.readRunSync(id).bytes, storeObjects(s.local), { expectId: id });
          if (!v.valid) throw new Error(`mirrored: ${id} ${v.error?.code ?? ""}`);
        }
      } finally {
        await s.close();
        rmSync(local, { recursive: true, force: true });
      }
    };
    let fetched = 0;
    let bytes = 0;
    const direct = async () => {
      const p = await PgStore.open(url);
      fetched = 0;
      bytes = 0;
      try {
        for (const id of await p.listRecords()) {
          const v = await verifyPgRun(p, id);
          if (!v.run.valid || v.run.checked.journals !== 1)
            throw new Error(`direct: ${id} ${v.run.error?.code ?? ""}`);
          fetched += v.fetched;
          bytes += v.fetchedBytes;
        }
      } finally {
        await p.close();
      }
    };
    const time = async (fn: () => Promise<void>) => {
      const t = process.hrtime.bigint();
      await fn();
      return Number(process.hrtime.bigint() - t) / 1e9;
    };
    await mirrored();
    await direct();
    const a: number[] = [];
    const b: number[] = [];
    for (let r = 0; r < 3; r++) {
      a.push(await time(mirrored));
      b.push(await time(direct));
    }
    const ta = median(a);
    const tb = median(b);
    console.log(
      `  ${String(runs)} runs, each 40 files in 10 directories and a 64-event journal; medians of 3`,
    );
    row("runs listed, mirrored into staging (anchor)", `${(runs / ta).toFixed(1)} runs/s`);
    row(
      "runs listed, read from PostgreSQL directly",
      `${(runs / tb).toFixed(1)} runs/s`,
      ta / tb,
      "mirrored",
    );
    row("objects fetched per run (direct)", (fetched / runs).toFixed(0));
    row("bytes fetched per run (direct)", (bytes / runs).toFixed(0));
  } finally {
    if (cluster !== undefined) stopCluster(cluster);
    rmSync(dir, { recursive: true, force: true });
  }
}
