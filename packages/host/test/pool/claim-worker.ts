// A claimant process for the pool race and crash tests (poollog.test.ts): waits until START_MS, then
// claims from the pool in DIR until it holds COUNT items or the pool is empty, printing one JSON line
// per attempt: {item, retries, signed} for a claim, {code, signed} for a refusal, where `signed` is
// how many signatures the attempt made (each signature reads the key's seed once: wire signBytes).
import { testKey, addressOf, type KeyPair } from "@sbx/wire";
import { claimPoolItem } from "@sbx/host/pool";

const [dir, startMs, count] = process.argv.slice(2);
if (dir === undefined || startMs === undefined || count === undefined)
  throw new Error("usage: DIR START_MS COUNT");
const host = testKey("poollog-host");
let signed = 0;
const key: KeyPair = {
  publicKey: host.publicKey,
  did: host.did,
  get seed() {
    signed++;
    return host.seed;
  },
};
const took = () => {
  const n = signed;
  signed = 0;
  return n;
};
const unit = addressOf({ unit: "poollog-race", pid: process.pid });
const grants = addressOf({ grants: "poollog-race" });
while (Date.now() < Number(startMs));
for (let i = 0; i < Number(count); i++) {
  try {
    const c = claimPoolItem(dir, { unit, grants, key, busyMs: 60_000 });
    process.stdout.write(JSON.stringify({ item: c.claim.item, retries: c.retries, signed: took() }) + "\n");
  } catch (e) {
    process.stdout.write(
      JSON.stringify({ code: (e as { code?: string }).code ?? String(e), signed: took() }) + "\n",
    );
    if ((e as { code?: string }).code === "PoolEmpty") break;
  }
}
