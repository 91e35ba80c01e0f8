// The run log of a mint ledger (jcp §4.6 "Runs driven by events"): which minted children a run was
// started for, so that a child minted by a standing driver (./driver.ts, `sbx on-event`) that died before its run started is not
// lost. It is an append-only log (@sbx/host/log) in the mint ledger's folder, `<mints>/runs/`, whose
// entries are `{run: "started", seq, child, event, holder}` (written right before the child's run
// starts: `holder` is the writing process's pid and start ticks) and `{run: "ended", seq, child,
// status, code?, exit?}` (after its run ended or was refused at its start), and, only when asked
// (`sbx on-event --rerun-interrupted`), `{run: "restarted", seq, child, event, holder, interrupted}`:
// a new start of an interrupted run, naming the dead holder of the start it follows. A start is a claim:
// it is appended on the head on which no start for that child was read, so of several processes
// racing for one child exactly one starts its run (the others lose the head, read again and find it
// claimed). The mint ledger itself is untouched: what its rate and caps counted stays counted once.
//
// A minted child is then in exactly one of these states:
//   unclaimed    no start: its minter died between the mint and the run (or is about to start it);
//                `sbx on-event --pending`, or the same event fed again, claims it and runs it;
//   running      started by a process that is still alive;
//   interrupted  started by a process that died before the run's end was written: the command may
//                have run in part, so it is never started again on its own (reported RunInterrupted);
//                `--rerun-interrupted` restarts it, claimed the same way (one restarter wins);
//   ended        its run ended (or was refused at its start) and that was written.
import { join } from "node:path";
import { canonicalBytes, parseStrict, payloadOf, type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import { StandingMinter, type StandingGrant } from "@sbx/jcp-grant/standing";
import type { ResolveOptions } from "@sbx/jcp-grant/grant";
import { HostError, isHostError } from "../errors.ts";
import { startTicks } from "../durable/lock.ts";
import { appendLog, readLog, type LogState } from "../log/index.ts";
import { readMintLog } from "../ledger/index.ts";

/** Where a mint ledger's run log lives. */
export function runLogOf(mints: string): string {
  return join(mints, "runs");
}

/** The process that started a run: pid and start ticks (so a reused pid is not taken for it). */
export interface RunHolder {
  readonly pid: number;
  readonly start: string;
}

/** How a run ended, as its `ended` entry says. */
export interface RunEnd {
  readonly status: "ran" | "refused";
  readonly code?: string;
  readonly exit?: number;
}

export type ChildState = "unclaimed" | "running" | "interrupted" | "ended";

/** One minted child of the mint ledger and what became of its run. */
export interface MintedRun {
  /** Its entry's position in the mint ledger (1-based). */
  readonly seq: number;
  readonly child: Digest;
  readonly event: Digest;
  /** The held chain plus the child: what its run goes under. */
  readonly chain: readonly Envelope[];
  readonly state: ChildState;
  readonly holder?: RunHolder;
  readonly end?: RunEnd;
}

const MAX_ENTRY_BYTES = 4096;

interface Started {
  readonly run: "started" | "restarted";
  readonly seq: number;
  readonly child: Digest;
  readonly event: Digest;
  readonly holder: RunHolder;
  /** A restart's: the holder of the start it follows, which died before that run's end. */
  readonly interrupted?: RunHolder;
}
interface Ended extends RunEnd {
  readonly run: "ended";
  readonly seq: number;
  readonly child: Digest;
}

function bad(dir: string, seq: number, what: string): HostError {
  return new HostError("BadLedger", `${dir}: entry ${seq} ${what}`);
}

const isInt = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;

function isHolder(h: unknown): h is RunHolder {
  if (typeof h !== "object" || h === null) return false;
  const o = h as Record<string, unknown>;
  return Object.keys(o).sort().join(",") === "pid,start" && isInt(o.pid) && typeof o.start === "string";
}

// Opens one run-log entry, strictly: exactly the members of its kind.
function openEntry(dir: string, seq: number, payload: Uint8Array): Started | Ended {
  let v: unknown;
  try {
    v = parseStrict(payload, { maxBytes: MAX_ENTRY_BYTES, maxDepth: 4 });
  } catch (e) {
    throw new HostError("BadLedger", `${dir}: entry ${seq} is not JSON`, { cause: e });
  }
  const o = (typeof v === "object" && v !== null && !Array.isArray(v) ? v : {}) as Record<string, unknown>;
  const keys = Object.keys(o).sort().join(",");
  if (o.run === "started" || o.run === "restarted") {
    const want =
      o.run === "started" ? "child,event,holder,run,seq" : "child,event,holder,interrupted,run,seq";
    if (
      keys !== want ||
      !isInt(o.seq) ||
      typeof o.child !== "string" ||
      typeof o.event !== "string" ||
      !isHolder(o.holder) ||
      (o.run === "restarted" && !isHolder(o.interrupted))
    )
      throw bad(dir, seq, `is not a run ${o.run === "started" ? "start" : "restart"} {${want}}`);
    return o as unknown as Started;
  }
  if (o.run === "ended") {
    const allowed = new Set(["run", "seq", "child", "status", "code", "exit"]);
    if (
      !Object.keys(o).every((k) => allowed.has(k)) ||
      !isInt(o.seq) ||
      typeof o.child !== "string" ||
      (o.status !== "ran" && o.status !== "refused") ||
      (o.code !== undefined && typeof o.code !== "string") ||
      (o.exit !== undefined && !isInt(o.exit))
    )
      throw bad(dir, seq, "is not a run end {run, seq, child, status, code?, exit?}");
    return o as unknown as Ended;
  }
  throw bad(dir, seq, "is neither a run start nor a run end");
}

const sameHolder = (a: RunHolder, b: RunHolder): boolean => a.pid === b.pid && a.start === b.start;

/** isAlive reports whether the process `h` names is still the one that wrote it. */
export function isAlive(h: RunHolder): boolean {
  return startTicks(h.pid) === h.start;
}

/** The holder this process writes into its starts. */
export function ownHolder(): RunHolder {
  return { pid: process.pid, start: startTicks(process.pid) ?? "0" };
}

interface RunLogState {
  readonly log: LogState;
  readonly started: Map<number, Started>;
  readonly ended: Map<number, Ended>;
}

// Reads the run log, checking each entry against the mint ledger's children (`children[seq - 1]`):
// an entry naming a position or a child the mint ledger does not hold, a second start or a second
// end of one child, or an end before its start is a broken run log (`BadLedger`).
function readRunLog(mints: string, children: readonly { child: Digest; event: Digest }[]): RunLogState {
  const dir = runLogOf(mints);
  const log = readLog(dir);
  const started = new Map<number, Started>();
  const ended = new Map<number, Ended>();
  for (const e of log.entries) {
    const x = openEntry(dir, e.seq, e.payload);
    const m = children[x.seq - 1];
    if (m === undefined || m.child !== x.child || (x.run !== "ended" && m.event !== x.event))
      throw bad(dir, e.seq, `names mint ${x.seq} / ${x.child}, which the mint ledger does not hold`);
    if (x.run === "started") {
      if (started.has(x.seq)) throw bad(dir, e.seq, `starts mint ${x.seq} a second time`);
      started.set(x.seq, x);
    } else if (x.run === "restarted") {
      const was = started.get(x.seq);
      if (was === undefined || ended.has(x.seq) || !sameHolder(was.holder, x.interrupted!))
        throw bad(
          dir,
          e.seq,
          `restarts mint ${x.seq}, whose run is not started by the holder it names, or ended`,
        );
      started.set(x.seq, x);
    } else {
      if (!started.has(x.seq) || ended.has(x.seq))
        throw bad(dir, e.seq, `ends mint ${x.seq}, which is not started or already ended`);
      ended.set(x.seq, x as Ended);
    }
  }
  return { log, started, ended };
}

/**
 * mintedRuns reads the mint ledger at `mints` (every entry verified as jcp standing verify does:
 * its codes) and its run log, and says of every minted child, in mint order, what became of its run.
 */
export function mintedRuns(
  mints: string,
  standing: StandingGrant,
  minter: KeyPair,
  opts: ResolveOptions = {},
): MintedRun[] {
  const ml = readMintLog(mints);
  StandingMinter.resume(standing, minter, ml, opts); // every entry verified before any is used
  const children = ml.entries.map((env) => {
    const p = payloadOf(env) as { child: Digest; event: Digest };
    return { child: p.child, event: p.event };
  });
  const runs = readRunLog(mints, children);
  return children.map(({ child, event }, i) => {
    const seq = i + 1;
    const s = runs.started.get(seq);
    const end = runs.ended.get(seq);
    const state: ChildState =
      s === undefined
        ? "unclaimed"
        : end !== undefined
          ? "ended"
          : isAlive(s.holder)
            ? "running"
            : "interrupted";
    return {
      seq,
      child,
      event,
      chain: [...(standing.held as Envelope[]), ml.children[i]!],
      state,
      ...(s ? { holder: s.holder } : {}),
      ...(end
        ? {
            end: {
              status: end.status,
              ...(end.code !== undefined ? { code: end.code } : {}),
              ...(end.exit !== undefined ? { exit: end.exit } : {}),
            },
          }
        : {}),
    };
  });
}

/**
 * claimRun appends the start of mint `seq`'s run on the run log, on a head at which no start of it
 * was read (compare-and-append; a lost head is read again). Returns null when this process claimed
 * it, or the holder of the start already there. With `rerun`, a run that is interrupted on that
 * head (its start's holder dead, no end) is claimed again by a restart naming that holder.
 */
export function claimRun(
  mints: string,
  run: { seq: number; child: Digest; event: Digest },
  holder: RunHolder = ownHolder(),
  rerun = false,
): RunHolder | null {
  const dir = runLogOf(mints);
  for (let i = 0; ; i++) {
    const ml = readMintLog(mints);
    const children = ml.entries.map((env) => payloadOf(env) as { child: Digest; event: Digest });
    const m = children[run.seq - 1];
    if (m === undefined || m.child !== run.child || m.event !== run.event)
      throw new HostError("BadLedger", `${mints}: mint ${run.seq} is not child ${run.child}`);
    const state = readRunLog(mints, children);
    const held = state.started.get(run.seq);
    const restart = held !== undefined && rerun && !state.ended.has(run.seq) && !isAlive(held.holder);
    if (held !== undefined && !restart) return held.holder;
    const entry: Started = {
      run: restart ? "restarted" : "started",
      seq: run.seq,
      child: run.child,
      event: run.event,
      holder,
      ...(restart ? { interrupted: held.holder } : {}),
    };
    try {
      appendLog(dir, state.log.head, canonicalBytes(entry));
      return null;
    } catch (e) {
      if (!isHostError(e, "StaleHead") || i >= 100_000) throw e;
    }
  }
}

/** endRun appends the end of mint `seq`'s run (after its start, which this process wrote). */
export function endRun(mints: string, run: { seq: number; child: Digest }, end: RunEnd): void {
  const dir = runLogOf(mints);
  const entry: Ended = {
    run: "ended",
    seq: run.seq,
    child: run.child,
    status: end.status,
    ...(end.code !== undefined ? { code: end.code } : {}),
    ...(end.exit !== undefined ? { exit: end.exit } : {}),
  };
  for (let i = 0; ; i++) {
    const { head } = readLog(dir);
    try {
      appendLog(dir, head, canonicalBytes(entry));
      return;
    } catch (e) {
      if (!isHostError(e, "StaleHead") || i >= 100_000) throw e;
    }
  }
}
