// A claimant process for the pool race and crash tests (poollog.test.ts, poolpg.test.ts): waits until
// START_MS, then claims from the pool in DIR until it holds COUNT items or the pool is empty, printing
// one JSON line per attempt: {item, retries, signed} for a claim, {code, signed} for a refusal, where
// `signed` is how many signatures the attempt made (counting-key.ts). With URL, the pool's ledger is
// its log in that PostgreSQL store (logStoreLedger), else the pool's log folder.
import { testKey, addressOf } from "@sbx/wire";
import { claimPoolItem, claimPoolItemOn, logStoreLedger, type Claimed } from "@sbx/host/pool";
import { PgStore } from "@sbx/host/pg";
import { countingKey } from "./counting-key.ts";

const [dir, startMs, count, url] = process.argv.slice(2);
if (dir === undefined || startMs === undefined || count === undefined)
  throw new Error("usage: DIR START_MS COUNT [URL]");
const { key, taken } = countingKey(testKey("poollog-host"));
const unit = addressOf({ unit: "poollog-race", pid: process.pid });
const grants = addressOf({ grants: "poollog-race" });
const pg = url === undefined ? null : await PgStore.open(url);
const claim = (): Claimed | Promise<Claimed> =>
  pg === null
    ? claimPoolItem(dir, { unit, grants, key, busyMs: 60_000 })
    : claimPoolItemOn(logStoreLedger(dir, pg.logs), dir, { unit, grants, key, busyMs: 60_000 });
while (Date.now() < Number(startMs));
for (let i = 0; i < Number(count); i++) {
  try {
    const c = await claim();
    process.stdout.write(JSON.stringify({ item: c.claim.item, retries: c.retries, signed: taken() }) + "\n");
  } catch (e) {
    process.stdout.write(
      JSON.stringify({ code: (e as { code?: string }).code ?? String(e), signed: taken() }) + "\n",
    );
    if ((e as { code?: string }).code === "PoolEmpty") break;
  }
}
await pg?.close();
