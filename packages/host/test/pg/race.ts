// The resume race: HOSTS processes try ATTEMPTS resumes in all of one parked run stored in
// PostgreSQL, every attempt built on the parked head. Shared by race.test.ts and the 1,000-attempt
// run of faults/pg-race.faults.ts.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import type { RunRecord, SnapshotRef } from "@sbx/sandbox-attest/runrecord";
import { readRun } from "@sbx/sandbox-attest/store";
import { PgStore } from "../../src/pg/index.ts";
import { lastTally, lineWorker, tsxArgv } from "../support/worker.ts";

const d = (s: string): Digest => digestBytes(utf8(s));

/** A race worker: `ready` once it is poised to race, `done` with its tally of outcomes by code. */
export interface RaceWorker {
  readonly ready: Promise<void>;
  readonly done: Promise<Record<string, number>>;
}

/**
 * raceWorker starts `script` (a tsx worker that prints "ready", waits, races, then prints its tally
 * as one JSON line) with `args` and `env`; `what` names it in a failure.
 */
export function raceWorker(
  script: string,
  args: readonly string[],
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): RaceWorker {
  const w = lineWorker<Record<string, number>>(tsxArgv(script, args), what, env);
  return { ready: w.ready, done: w.done.then(lastTally) };
}

function host(args: string[], snap: SnapshotRef): RaceWorker {
  return raceWorker(join(import.meta.dirname, "resume-worker.ts"), args, "resume host", {
    ...process.env,
    SBX_RACE_SNAPSHOT: JSON.stringify(snap),
  });
}

/** What the race did: outcomes summed over hosts, and the record as read afterwards. */
export interface ResumeRace {
  readonly tally: Record<string, number>;
  readonly record: RunRecord;
}

/** resumeRace parks a run in the store at `url` and races `attempts` resumes from `hosts` processes. */
export async function resumeRace(url: string, hosts: number, attempts: number): Promise<ResumeRace> {
  const store = await PgStore.open(url);
  try {
    const snap: SnapshotRef = { fs_root: d("race root"), manifest: d("race manifest") };
    const id = await store.createRecord(
      d(`race unit ${String(Date.now())} ${String(Math.random())}`),
      d("grants"),
    );
    const h1 = await store.appendSegment(id, id, { kind: "executed", attestation: d("a") });
    const parked = await store.appendSegment(id, h1, { kind: "suspended", snapshot: snap, at_ms: 10 });
    const go = join(mkdtempSync(join(tmpdir(), "sbx-race-")), "go");
    const per = Math.ceil(attempts / hosts);
    const hs = Array.from({ length: hosts }, (_, i) =>
      host([url, id, parked, go, String(Math.min(per, attempts - i * per)), `host${String(i)}`], snap),
    );
    await Promise.all(hs.map((h) => h.ready));
    writeFileSync(go, "");
    const tally: Record<string, number> = {};
    for (const t of await Promise.all(hs.map((h) => h.done)))
      for (const [k, n] of Object.entries(t)) tally[k] = (tally[k] ?? 0) + n;
    return { tally, record: await readRun(store, id) };
  } finally {
    await store.close();
  }
}
