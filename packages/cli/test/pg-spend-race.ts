// The spend race on the PostgreSQL ledger (jcp §4.3, §13.7): WRITERS processes, each its own metering
// host with its own key, spend 1 J EACH times on one grant of BUDGET joules in one ledger log.
// Afterwards the ledger is replayed and verified with every host trusted.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey, type Envelope } from "@sbx/wire";
import { issueGrant } from "@sbx/jcp-grant/grant";
import { PgStore } from "@sbx/host/pg";
import { replayLedger } from "@sbx/host/ledger";
import { raceWorker, type RaceWorker } from "../../host/test/pg/race.ts";

function grantPayload(env: Envelope): unknown {
  return JSON.parse(Buffer.from(env.payload, "base64").toString("utf8"));
}

function writer(args: string[]): RaceWorker {
  return raceWorker(join(import.meta.dirname, "pg-spend-worker.ts"), args, "spend writer");
}

/** What the race did and what the ledger verified to. */
export interface SpendRace {
  readonly tally: Record<string, number>;
  readonly receipts: number;
  readonly spentUj: bigint;
}

/** spendRace runs the race against the store at `url` and replays the ledger afterwards. */
export async function spendRace(
  url: string,
  writers: number,
  each: number,
  budgetJ: number,
): Promise<SpendRace> {
  const root = testKey("spend-root");
  const grant = issueGrant(root, {
    holder: testKey("spend-alice").did,
    resources: ["/fs/work/**"],
    actions: ["read"],
    uj: String(budgetJ * 1_000_000),
    exp_ms: Date.now() + 86_400_000,
    depth: 0,
  });
  const dir = mkdtempSync(join(tmpdir(), "sbx-pgspend-"));
  writeFileSync(join(dir, "chain.json"), JSON.stringify([grant]));
  const name = `spend/race-${String(Date.now())}`;
  const go = join(dir, "go");
  const ws = Array.from({ length: writers }, (_, i) =>
    writer([url, name, join(dir, "chain.json"), go, String(each), String(i), String(writers)]),
  );
  await Promise.all(ws.map((w) => w.ready));
  writeFileSync(go, "");
  const tally: Record<string, number> = {};
  for (const t of await Promise.all(ws.map((w) => w.done)))
    for (const [k, n] of Object.entries(t)) tally[k] = (tally[k] ?? 0) + n;
  const store = await PgStore.open(url);
  try {
    const hosts = Array.from({ length: writers }, (_, i) => testKey(`spend-host-${String(i)}`).did);
    const ledger = await replayLedger(store.logs, name, { roots: [root.did], hosts });
    return {
      tally,
      receipts: ledger.receipts.length,
      spentUj: ledger.used(addressOf(grantPayload(grant))).uj,
    };
  } finally {
    await store.close();
  }
}
