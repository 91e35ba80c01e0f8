// A metering host of the PostgreSQL spend race (pg-spend-race.ts): opens the store, says "ready",
// waits for the go file, spends 1 J COUNT times on the chain in ledger NAME through spendOnLog, and
// prints one JSON line of counts by outcome. Usage: pg-spend-worker.ts URL NAME CHAINFILE GOFILE COUNT INDEX HOSTS
import { existsSync, readFileSync } from "node:fs";
import { testKey, type Envelope } from "@sbx/wire";
import { PgStore } from "@sbx/host/pg";
import { spendOnLog } from "@sbx/host/ledger";

const [url, name, chainFile, go, count, index, hosts] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
const chain = JSON.parse(readFileSync(chainFile, "utf8")) as Envelope[];
const host = testKey(`spend-host-${index}`);
const opts = {
  roots: [testKey("spend-root").did],
  hosts: Array.from({ length: Number(hosts) }, (_, i) => testKey(`spend-host-${String(i)}`).did),
};
const store = await PgStore.open(url, { max: 2 });
process.stdout.write("ready\n");
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 2));
const tally: Record<string, number> = {};
for (let i = 0; i < Number(count); i++) {
  let k = "ok";
  try {
    await spendOnLog(store.logs, name, chain, host, { uj: "1000000" }, opts);
  } catch (e) {
    k = (e as { code?: string }).code ?? String(e);
  }
  tally[k] = (tally[k] ?? 0) + 1;
}
await store.close();
process.stdout.write(`${JSON.stringify(tally)}\n`);
