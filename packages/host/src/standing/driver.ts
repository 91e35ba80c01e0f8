// Standing grants drive runs (jcp §4.6 "Runs driven by events", sandbox-attest §5.6): the loop of
// `sbx on-event`, in the engine. Each event fed (one JSON value) mints a child of the held grant on
// the mint ledger (../ledger/mintlog.ts: the caps and the rate are checked on the head the entry is
// appended to, so concurrent minters cannot pass them) and queues a run under that child, which the
// caller's `run` executes (./childrun.ts: a governed run, debited on the spend ledger). An event
// the policy does not admit mints nothing and starts nothing; it is reported with the refusal's
// code. Events are minted when they arrive (the rate counts arrivals); their runs start one after
// another, in the order of the events. Nothing minted is lost on a crash (./runlog.ts): each run's
// start is claimed on the mint ledger's run log right before it starts, so a child minted by a
// process that died before its run is found there: the same event fed again, or pending(), claims
// it and runs it, exactly once.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { isCodedError, parseStrict, type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import { eventAddress, type StandingGrant } from "@sbx/jcp-grant/standing";
import { faultPoint } from "../store/index.ts";
import { writeJsonOutput } from "../files.ts";
import { mintOn } from "../ledger/index.ts";
import { claimRun, endRun, mintedRuns, type MintedRun } from "./runlog.ts";

/** The longest event line read (64 KiB); a longer one is refused `BadEvent`. */
export const MAX_EVENT_BYTES = 64 << 10;

/** What became of one event, or of one pending child. */
export interface EventResult {
  /** 1-based position of the event in what was fed; 0 for a child run by pending(). */
  readonly n: number;
  readonly event: string | null;
  readonly status: "ran" | "refused";
  /** The refusal's code (of the mint, of the run's claim or of the run's start) when refused. */
  readonly code?: string;
  readonly message?: string;
  readonly child?: string;
  readonly mint_seq?: number;
  /** What the run callback returned as its record (`sbx run --json`'s object). */
  readonly run?: unknown;
  /** The run's exit: 0 when its command exited 0, else 1. */
  readonly exit?: number;
  /** Set when the child had been minted by an earlier driver that never started its run. */
  readonly recovered?: true;
}

/** One minted child whose run the driver starts: its chain, its position, its own folder. */
export interface ChildRun {
  readonly seq: number;
  readonly child: Digest;
  /** The held chain plus the child, root first: what the run goes under. */
  readonly chain: readonly Envelope[];
  /** A folder of its own (made, holding grant.chain): `<dir>/<seq>`, or `<seq>.rerun-<pid>`. */
  readonly dir: string;
}

/** What a run callback returns: the run's record and its exit (0 when its command exited 0). */
export interface ChildRunOutcome {
  readonly run: unknown;
  readonly exit: number;
}

/** The counts over every result (`sbx on-event`'s last line). */
export interface DriverSummary {
  readonly events: number;
  readonly minted: number;
  readonly ran: number;
  readonly recovered?: number;
  readonly refused: Record<string, number>;
}

/** What a StandingDriver needs. */
export interface StandingDriverOptions {
  /** The mint ledger's folder (its run log is `<mints>/runs/`). */
  readonly mints: string;
  readonly standing: StandingGrant;
  /** The held grant's holder: signs the children and the ledger entries. */
  readonly minter: KeyPair;
  /** Trusted root issuers of the held chain. */
  readonly roots: readonly string[];
  /** Where each child's folder is made (`<dir>/<mint seq>`). */
  readonly dir: string;
  /** Runs one child's command under its chain; what it throws is the run's refusal, by its code. */
  readonly run: (c: ChildRun) => Promise<ChildRunOutcome>;
  /** Called with each result as it is known (a refusal at once, a run when it ends). */
  readonly report?: (r: EventResult) => void;
  /** Called when a run's end could not be written on the run log (the run itself is reported). */
  readonly warn?: (line: string) => void;
  /** Start again, once, a child whose run was interrupted (its starter died before its end). */
  readonly rerunInterrupted?: boolean;
  /** Once aborted, no further run starts: each queued one is refused `Interrupted`. */
  readonly abort?: AbortSignal;
  readonly now?: () => number;
}

/** codeOf is a refusal's code and message: a coded error's, a system error's errno, else `Error`. */
function codeOf(e: unknown): { code: string; message: string } {
  if (isCodedError(e)) return { code: e.code, message: e.reason };
  const code = (e as { code?: unknown } | null)?.code;
  return {
    code: typeof code === "string" ? code : "Error",
    message: e instanceof Error ? e.message : String(e),
  };
}

// The refusal of a replayed event or a pending child whose run is not to be started: still
// running (RunInProgress) or interrupted (RunInterrupted); null for any other state.
function refusedRun(n: number, m: MintedRun): EventResult | null {
  const which = { n, event: m.event, child: m.child, mint_seq: m.seq };
  const pid = String(m.holder?.pid ?? 0);
  if (m.state === "running")
    return {
      ...which,
      status: "refused",
      code: "RunInProgress",
      message: `its child's run was started by sbx on-event pid ${pid}, still running`,
    };
  if (m.state === "interrupted")
    return {
      ...which,
      status: "refused",
      code: "RunInterrupted",
      message: `its child's run was started by pid ${pid}, which died before the run ended; the command may have run in part, so it is not started again`,
    };
  return null;
}

/**
 * StandingDriver mints a child of a standing grant per event and runs each under it, one run after
 * another (jcp §4.6). feed() and pending() queue; drain() waits for every queued run.
 */
export class StandingDriver {
  readonly #o: StandingDriverOptions;
  readonly #results: EventResult[] = [];
  // Mint positions this driver has queued a run for: a replay of its own event is EventReplayed.
  readonly #queued = new Set<number>();
  #queue: Promise<void> = Promise.resolve();
  #fed = 0;
  #minted = 0;

  constructor(o: StandingDriverOptions) {
    this.#o = o;
  }

  /** Every result so far, in the order known. */
  get results(): readonly EventResult[] {
    return this.#results;
  }

  /** children reads the mint ledger and its run log (mintedRuns: BadLedger and the mint codes). */
  children(): MintedRun[] {
    const o = this.#o;
    return mintedRuns(o.mints, o.standing, o.minter, { roots: [...o.roots] });
  }

  /** leftOver: the children whose run never started or was interrupted ([] when unreadable). */
  leftOver(): MintedRun[] {
    try {
      return this.children().filter((m) => m.state === "unclaimed" || m.state === "interrupted");
    } catch {
      return [];
    }
  }

  /**
   * pending queues the run of every child whose run never started (and, with rerunInterrupted, of
   * every interrupted one), in mint order, and reports each other unfinished one (RunInProgress,
   * RunInterrupted). Throws what children() throws.
   */
  pending(): void {
    for (const m of this.children()) {
      if (this.#runnable(m)) this.#enqueue(0, m, true);
      else {
        const r = refusedRun(0, m);
        if (r !== null) this.#report(r);
      }
    }
  }

  /**
   * feed takes one event line: a JSON value (bare, or a signed event envelope) of at most
   * MAX_EVENT_BYTES, else `BadEvent`. It mints a child for it and queues its run; a refused mint is
   * reported by its code, except an EventReplayed whose child's run never started (or, with
   * rerunInterrupted, was interrupted): that child's run is queued, as recovered.
   */
  feed(line: string): void {
    const n = ++this.#fed;
    let event: unknown;
    let address: Digest;
    try {
      if (line.length > MAX_EVENT_BYTES)
        throw new RangeError(`event ${String(n)} is longer than ${String(MAX_EVENT_BYTES)}`);
      event = parseStrict(line, { maxBytes: MAX_EVENT_BYTES, maxDepth: 32 });
      address = eventAddress(event);
    } catch (e) {
      this.#report({ n, event: null, status: "refused", code: "BadEvent", message: codeOf(e).message });
      return;
    }
    const o = this.#o;
    try {
      const m = mintOn(o.mints, o.standing, o.minter, event, o.now ?? Date.now, { roots: [...o.roots] });
      faultPoint("on-event:minted"); // crash tests: the child on the mint ledger, its run not started
      this.#minted++;
      const chain = m.chain as Envelope[];
      this.#enqueue(
        n,
        { seq: m.seq, child: m.childAddress, event: address, chain, state: "unclaimed" },
        false,
      );
    } catch (e) {
      this.#replayed(n, address, codeOf(e));
    }
  }

  /** drain waits for every queued run to end and be reported. */
  async drain(): Promise<void> {
    await this.#queue;
  }

  /** summary counts the events fed, the children minted, the runs, the recovered and the refusals. */
  summary(): DriverSummary {
    const refused: Record<string, number> = {};
    for (const r of this.#results)
      if (r.status === "refused") refused[r.code ?? "Error"] = (refused[r.code ?? "Error"] ?? 0) + 1;
    const recovered = this.#results.filter((r) => r.recovered === true).length;
    return {
      events: this.#fed,
      minted: this.#minted,
      ran: this.#results.filter((r) => r.status === "ran").length,
      ...(recovered > 0 ? { recovered } : {}),
      refused,
    };
  }

  /** ok: every event fed has its result, and every result is a run that exited 0. */
  ok(): boolean {
    const rs = this.#results;
    return (
      rs.filter((r) => r.n > 0).length === this.#fed && rs.every((r) => r.status === "ran" && r.exit === 0)
    );
  }

  // The same event again: run its child if its minter died before starting it.
  #replayed(n: number, address: Digest, refusal: { code: string; message: string }): void {
    let c = refusal;
    let m: MintedRun | undefined;
    try {
      if (c.code === "EventReplayed") m = this.children().find((x) => x.event === address);
    } catch (e) {
      c = codeOf(e);
    }
    // (A child this driver queued is its own: the event is simply replayed.)
    if (m !== undefined && this.#queued.has(m.seq)) m = undefined;
    if (m !== undefined && this.#runnable(m)) this.#enqueue(n, m, true);
    else this.#report((m && refusedRun(n, m)) ?? { n, event: address, status: "refused", ...c });
  }

  #runnable(m: MintedRun): boolean {
    return m.state === "unclaimed" || (this.#o.rerunInterrupted === true && m.state === "interrupted");
  }

  #report(r: EventResult): void {
    this.#results.push(r);
    this.#o.report?.(r);
  }

  #enqueue(n: number, m: MintedRun, recovered: boolean): void {
    this.#queued.add(m.seq);
    this.#queue = this.#queue.then(() => this.#runOne(n, m, recovered));
  }

  // One run: claimed on the run log first (so no child is ever run twice), run, its end written.
  async #runOne(n: number, m: MintedRun, recovered: boolean): Promise<void> {
    const o = this.#o;
    const which = {
      n,
      event: m.event,
      child: m.child,
      mint_seq: m.seq,
      ...(recovered ? { recovered: true as const } : {}),
    };
    if (o.abort?.aborted === true) {
      const message = "stopped before its run; its child is not started: sbx on-event --pending runs it";
      this.#report({ ...which, status: "refused", code: "Interrupted", message });
      return;
    }
    const rerun = m.state === "interrupted";
    let holder;
    try {
      holder = claimRun(o.mints, { seq: m.seq, child: m.child, event: m.event }, undefined, rerun);
    } catch (e) {
      this.#report({ ...which, status: "refused", ...codeOf(e) });
      return;
    }
    if (holder !== null) {
      const message = `another sbx on-event (pid ${String(holder.pid)}) started its run first`;
      this.#report({ ...which, status: "refused", code: "RunClaimed", message });
      return;
    }
    faultPoint("on-event:run-claimed"); // crash tests: started on the run log, the run not yet begun
    let r: EventResult;
    try {
      // (Inside the try: whatever refuses this run is reported, and its end written.)
      const dir = join(o.dir, rerun ? `${String(m.seq)}.rerun-${String(process.pid)}` : String(m.seq));
      mkdirSync(dir, { recursive: true });
      writeJsonOutput(join(dir, "grant.chain"), m.chain);
      const done = await o.run({ seq: m.seq, child: m.child, chain: m.chain, dir });
      r = { ...which, status: "ran", run: done.run, exit: done.exit };
    } catch (e) {
      r = { ...which, status: "refused", ...codeOf(e) };
    }
    this.#end(m, r);
    this.#report(r);
  }

  #end(m: MintedRun, r: EventResult): void {
    const end = {
      status: r.status,
      ...(r.code !== undefined ? { code: r.code } : {}),
      ...(r.exit !== undefined ? { exit: r.exit } : {}),
    };
    try {
      endRun(this.#o.mints, { seq: m.seq, child: m.child }, end);
    } catch (e) {
      this.#o.warn?.(
        `sbx on-event: mint ${String(m.seq)}: its run's end could not be written: ${codeOf(e).message}`,
      );
    }
  }
}
