// A host of the two-host resume race (twohost-scenario.ts): opens the PostgreSQL store, says
// "ready", waits for the go file, then tries COUNT times (4 at a time) to append a resumed segment
// on HEAD — the parked head it was given — timed after the suspension (AT_MS + i), and prints one
// JSON line of counts by outcome. Usage: twohost-resume-worker.ts URL ID HEAD GOFILE COUNT AT_MS
import { existsSync } from "node:fs";
import type { Digest } from "@sbx/wire";
import { resumedSegment, type SnapshotRef } from "@sbx/sandbox-attest/runrecord";
import { PgStore } from "@sbx/host/pg";

const [url, id, head, go, count, atMs] = process.argv.slice(2) as [
  string,
  Digest,
  Digest,
  string,
  string,
  string,
];
const snap = JSON.parse(process.env["SBX_RACE_SNAPSHOT"] ?? "null") as SnapshotRef;
const store = await PgStore.open(url, { max: 4 });
process.stdout.write("ready\n");
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 2));
const tally: Record<string, number> = {};
let next = 0;
const idle = { uj: "5", provenance: "estimated" as const, source: "model:twohost-race", basis: { w: "1" } };
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
