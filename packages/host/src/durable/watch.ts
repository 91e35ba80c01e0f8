// §13.10a item 9 Watching a run from outside it: `sbx wait RUN` and `sbx ps`. Nothing here takes the
// run's lock or speaks to its supervisor: it reads the record (through the RunStore, so a file store
// or PostgreSQL) and the run's host-local files in the store's `live/` folder (the open-interval
// file, the lock) and creates nothing, so a watcher can never delay or disturb what it watches.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { parseDigest, toHex, type Digest } from "@sbx/wire";
import type { Outcome } from "@sbx/sandbox-attest/attestation";
import { decodeRecord, type CloseOutcome, type RunRecord } from "@sbx/sandbox-attest/runrecord";
import { HostError } from "../errors.ts";
import type { RunStore } from "../stores/index.ts";
import { lockHolder } from "./lock.ts";
import { readOpenInterval, supervisorGone, type OpenInterval } from "./orphan.ts";
import { readVerifiedRun } from "./record.ts";

/** How a wait ended (see waitRun). */
export type WaitEnd =
  /** The command ended by itself (or was ended) and its last interval is recorded: its outcome. */
  | { readonly state: "ended"; readonly outcome: Outcome }
  | { readonly state: "parked" }
  | { readonly state: "closed"; readonly outcome: CloseOutcome; readonly last: Outcome | null }
  | { readonly state: "moved"; readonly to: string }
  /** The supervisor's pid no longer names it (§13.10a item 8); `unrecorded`: its interval is not recorded. */
  | { readonly state: "supervisor_gone"; readonly pid: number; readonly unrecorded: boolean }
  /** A file store's active run with no interval open and nothing holding it: nothing will end it. */
  | { readonly state: "unsupervised" };

/** The paths watch.ts reads, computed without creating the `live/` folder (runPaths makes it). */
function liveFiles(storeRoot: string, id: Digest): { interval: string; lock: string } {
  const hex = toHex(parseDigest(id));
  const live = join(storeRoot, "live");
  return { interval: join(live, `${hex}.interval.json`), lock: join(live, `${hex}.lock`) };
}

async function recordOf(store: RunStore, id: Digest): Promise<RunRecord> {
  const bytes = await store.readRecordBytes(id);
  if (bytes === null) throw new HostError("RunNotFound", `no run ${id} in store ${store.root}`);
  return decodeRecord(bytes).record;
}

/** One look at the run: how it stands, or null while something is still driving it. */
type Look =
  | Exclude<WaitEnd, { state: "ended" } | { state: "closed" }>
  | { readonly state: "ended" }
  | { readonly state: "closed" }
  | null;

function look(rec: RunRecord, files: { interval: string; lock: string }, local: boolean): Look {
  if (rec.phase === "closed") return { state: "closed" };
  if (rec.phase === "moved") return { state: "moved", to: rec.movedTo ?? "" };
  if (rec.phase === "parked") return { state: "parked" };
  // Active. The supervisor keeps the interval file from before the unit runs until its sandbox is
  // freed, after the last interval is recorded (supervisor.ts #finish): while it is there and its
  // writer lives, the run is still going, a suspension in progress included (whose executed
  // segment, SIGSTOP, comes before its suspended one).
  const o: OpenInterval | null = readOpenInterval(files.interval);
  if (o !== null)
    return supervisorGone(o)
      ? { state: "supervisor_gone", pid: o.pid, unrecorded: o.head === rec.head }
      : null;
  if (rec.segments.at(-1)?.kind === "executed") return { state: "ended" };
  // Nothing open and nothing ended: a run being started or resumed (its lock held first), or, on
  // PostgreSQL, one that another host may be driving; on a file store with no live holder, nothing is.
  if (!local || lockHolder(files.lock) !== null) return null;
  return { state: "unsupervised" };
}

/** How waitRun polls. */
export interface WaitOptions {
  /** Give up (`WaitTimeout`) after this many ms; undefined: wait as long as it takes. */
  readonly timeoutMs?: number;
  /** The poll period (default 100 ms). */
  readonly everyMs?: number;
  /** The store is a file store (its `live/` folder the only one that can drive the run). */
  readonly local: boolean;
}

/**
 * waitRun (§13.10a item 9) blocks until run `id` has stopped going: its command ended and its last
 * interval is recorded (the outcome read from that executed segment's attestation, the record
 * verified from genesis as a resume would read it), or the run is parked, closed or moved, or its
 * supervisor is gone. It polls the record and the live files every `everyMs`, read only. A run
 * that has stopped already ends the wait at once. `WaitTimeout` when `timeoutMs` passes first.
 */
export async function waitRun(store: RunStore, id: Digest, o: WaitOptions): Promise<WaitEnd> {
  const files = liveFiles(store.root, id);
  const every = o.everyMs ?? 100;
  const deadline = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs;
  let unsupervised = 0;
  for (;;) {
    const l = look(await recordOf(store, id), files, o.local);
    // Unsupervised twice in a row: a run just created is locked by its starter a moment later.
    if (l !== null && l.state === "unsupervised") unsupervised++;
    else unsupervised = 0;
    if (l !== null && (l.state !== "unsupervised" || unsupervised > 1)) {
      if (l.state !== "ended" && l.state !== "closed") return l;
      const v = await readVerifiedRun(store, id);
      const lastSeg = v.record.segments.at(-1);
      if (l.state === "closed")
        return {
          state: "closed",
          outcome: lastSeg?.kind === "closed" ? lastSeg.outcome : "failed",
          last: v.lastOutcome,
        };
      // The record read again for its attestations: it may have moved on since (resumed, closed).
      if (v.lastOutcome !== null) return { state: "ended", outcome: v.lastOutcome };
    }
    const left = deadline - Date.now();
    if (left <= 0)
      throw new HostError(
        "WaitTimeout",
        `run ${id} was still going after ${String(o.timeoutMs)} ms (the wait's --timeout)`,
      );
    await new Promise((r) => setTimeout(r, Math.min(every, left)));
  }
}

/** waitText: the one line `sbx wait` prints for how the wait ended. */
export function waitText(e: WaitEnd): string {
  switch (e.state) {
    case "ended":
      return outcomeLine(e.outcome);
    case "parked":
      return "parked";
    case "closed":
      return `closed ${e.outcome}`;
    case "moved":
      return `moved to ${JSON.stringify(e.to)}`;
    case "supervisor_gone":
      return `supervisor gone (pid ${String(e.pid)})${e.unrecorded ? ": its interval is not recorded yet" : ""}`;
    case "unsupervised":
      return "not running: no supervisor holds the run on this host";
  }
}

/** outcomeLine: `exited N`, `signaled SIG`, or `spawn failed (REASON)`. */
export function outcomeLine(o: Outcome): string {
  if (o.status === "exited") return `exited ${String(o.exit_code)}`;
  if (o.status === "signaled") return `signaled ${o.signal}`;
  return `spawn failed (${o.reason})`;
}

/** One run with a live supervisor on this host, as `sbx ps` lists it. */
export interface LiveRun {
  readonly id: Digest;
  readonly pid: number;
  /** The start (epoch ms) of the interval its file names: the open one, or a frozen run's last. */
  readonly since_ms: number;
}

/**
 * liveRuns lists the runs among `ids` whose open-interval file in `storeRoot`'s `live/` folder
 * names a live supervisor, by id. A file that does not parse is left out (`sbx runs` says it).
 */
export function liveRuns(storeRoot: string, ids: readonly Digest[]): LiveRun[] {
  let names: string[];
  try {
    names = readdirSync(join(storeRoot, "live"));
  } catch {
    return [];
  }
  const present = new Set(names);
  const out: LiveRun[] = [];
  for (const id of ids) {
    const file = `${toHex(parseDigest(id))}.interval.json`;
    if (!present.has(file)) continue;
    let o: OpenInterval | null;
    try {
      o = readOpenInterval(join(storeRoot, "live", file));
    } catch {
      continue;
    }
    if (o !== null && !supervisorGone(o)) out.push({ id, pid: o.pid, since_ms: o.start_ms });
  }
  return out;
}
