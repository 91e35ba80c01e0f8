// A warm-pool claim's ledger step with the ledger in PostgreSQL (sandbox-attest §15.7.1: the log
// pool/<pool_id>, logStoreLedger over PgLogStore) against the same step on the pool's log folder
// (poollog.ts, with its warm opens), interleaved in one process on a throwaway cluster, so a busy
// machine slows both alike. One claim: the ledger read and verified (the folder: only new entries;
// PostgreSQL: the log's new rows, then §15.7 over every envelope from genesis), the residency+claim
// envelopes signed, and the compare-and-append (folder: link(2) and fsyncs; PostgreSQL: one
// conditional insert, committed). Items are workspace-only (no sandbox), so the ledger is what is
// timed. Medians; the anchor is the folder.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { claimPoolItem, claimPoolItemOn, createPoolDir, logStoreLedger } from "@sbx/host/pool";
import { PgStore, startCluster, stopCluster, type TestCluster } from "@sbx/host/pg";
import { median, row } from "./measure.ts";

const CLAIMS = Number(process.env["SBX_BENCH_CLAIMPG_CLAIMS"] ?? 60);
const key = testKey("claimpg-bench");
const manifest = addressOf({ bench: "claimpg" });
const unit = addressOf({ unit: "claimpg" });
const grants = addressOf({});

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "sbx-bench-claimpg-"));
  let cluster: TestCluster | undefined;
  let pg: PgStore | undefined;
  try {
    cluster = await startCluster();
    await PgStore.init(cluster.url);
    pg = await PgStore.open(cluster.url);
    const folder = join(dir, "folder");
    const inPg = join(dir, "pg");
    const ledger = logStoreLedger(inPg, pg.logs);
    const size = CLAIMS + 1;
    await createPoolDir(folder, { name: "f", manifest, size, key, idleProcess: false });
    await createPoolDir(inPg, { name: "p", manifest, size, key, idleProcess: false, ledger });
    const f: number[] = [];
    const p: number[] = [];
    for (let i = 0; i <= CLAIMS; i++) {
      const t0 = process.hrtime.bigint();
      claimPoolItem(folder, { unit, grants, key });
      const t1 = process.hrtime.bigint();
      await claimPoolItemOn(ledger, inPg, { unit, grants, key });
      const t2 = process.hrtime.bigint();
      if (i === 0) continue; // warm-up
      f.push(Number(t1 - t0) / 1e6);
      p.push(Number(t2 - t1) / 1e6);
    }
    const ms = (x: number) => `${x.toFixed(2)} ms`;
    console.log(
      `  ${String(CLAIMS)} interleaved claims from pools of ${String(size)} items (ledgers of ${String(size)}–${String(3 * size)} envelopes); medians`,
    );
    row("claim, ledger in the pool's log folder", ms(median(f)), 1, "folder");
    row(
      "claim, ledger in PostgreSQL (log pool/<pool_id>)",
      ms(median(p)),
      median(f) / median(p),
      "the folder's claims/s",
    );
  } finally {
    await pg?.close();
    if (cluster !== undefined) stopCluster(cluster);
    rmSync(dir, { recursive: true, force: true });
  }
}
