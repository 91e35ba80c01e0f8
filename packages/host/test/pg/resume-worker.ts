// A host of the resume race (race.test.ts, faults/pg-race.faults.ts, and the two-host race of
// packages/cli/test/twohost-scenario.ts): opens the PostgreSQL store, says "ready", waits for the go
// file, then tries COUNT times (4 at a time) to append a resumed segment on HEAD — the head it read
// while the run was parked — timed AT_MS + i (default 1,000,000 + i; the two-host race passes a time
// after the suspension), its idle figure's source `model:TAG`, and prints one JSON line of counts by
// outcome: {"ok": n, "StaleHead": n, …}. Usage: resume-worker.ts URL ID HEAD GOFILE COUNT TAG [AT_MS]
import { existsSync } from "node:fs";
import type { Digest } from "@sbx/wire";
import { resumedSegment, type SnapshotRef } from "@sbx/sandbox-attest/runrecord";
import { PgStore } from "../../src/pg/index.ts";

const [url, id, head, go, count, tag, atMs = "1000000"] = process.argv.slice(2) as [
  string,
  Digest,
  Digest,
  string,
  string,
  string,
  string?,
];
const snap = JSON.parse(process.env["SBX_RACE_SNAPSHOT"] ?? "null") as SnapshotRef;
const store = await PgStore.open(url, { max: 4 });
process.stdout.write("ready\n");
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 2));
const tally: Record<string, number> = {};
let next = 0;
const idle = { uj: "5", provenance: "estimated" as const, source: `model:${tag}`, basis: { w: "1" } };
async function lane(): Promise<void> {
  for (let i = next++; i < Number(count); i = next++) {
    let k: string;
    try {
      await store.appendSegment(id, head, resumedSegment(snap, Number(atMs) + i, idle));
      k = "ok";
    } catch (e) {
      k = (e as { code?: string }).code ?? String(e);
    }
    tally[k] = (tally[k] ?? 0) + 1;
  }
}
await Promise.all([lane(), lane(), lane(), lane()]);
await store.close();
process.stdout.write(`${JSON.stringify(tally)}\n`);
