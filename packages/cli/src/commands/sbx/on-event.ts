// `sbx on-event --standing POLICY -- CMD…`: standing grants drive runs (jcp §4.6, sandbox-attest
// §5.6). Each event read (one JSON value per line) mints a child of the held grant through the mint
// ledger, on the append-only log (jcp/lib/mintlog.ts: the caps and the rate are checked on the head
// the entry is appended to, so concurrent minters cannot pass them), and starts a governed run
// under it: `sbx run --grant CHILD` (./run.ts, ./grant.ts), whose scopes bind the sandbox, whose
// budget is enforced live and whose energy is debited on the spend ledger. An event the policy does
// not admit mints nothing and starts nothing; it is reported with the refusal's code. Events are
// minted when they arrive (the rate counts arrivals) and their runs start one after another.
// Nothing minted is lost on a crash (./on-event-runs.ts): each run's start is claimed on the mint
// ledger's run log right before it starts, so a child minted by a process that died before its run
// is found there: the same event fed again, or `--pending`, claims it and runs it, exactly once.
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { isCodedError, parseStrict, type Digest, type Envelope } from "@sbx/wire";
import { faultPoint } from "@sbx/host/store";
import { eventAddress } from "@sbx/jcp-grant/standing";
import { EXIT, parseOptions, UsageError, type Command, type Io } from "../../command.ts";
import { CliError } from "../../errors.ts";
import { readKey, readPrincipal } from "@sbx/host/keys";
import { readChain, readJson, writeJson } from "../jcp/lib/files.ts";
import { mintOn } from "@sbx/host/ledger";
import { command as runCommand } from "./run.ts";
import { claimRun, endRun, mintedRuns, type MintedRun } from "./on-event-runs.ts";

const MAX_EVENT_LINE = 64 << 10;

/** What became of one event. */
export interface EventResult {
  /** 1-based position of the event in the input; 0 for a child run by --pending. */
  readonly n: number;
  readonly event: string | null;
  readonly status: "ran" | "refused";
  /** The refusal's code (of the mint, or of the run's start) when refused. */
  readonly code?: string;
  readonly message?: string;
  readonly child?: string;
  readonly mint_seq?: number;
  readonly run?: unknown;
  readonly exit?: number;
  /** Set when the child had been minted by an earlier invocation that never started its run. */
  readonly recovered?: true;
}

function codeOf(e: unknown): { code: string; message: string } {
  if (isCodedError(e)) return { code: e.code, message: e.reason };
  const code = (e as { code?: unknown } | null)?.code;
  return {
    code: typeof code === "string" ? code : "Error",
    message: e instanceof Error ? e.message : String(e),
  };
}

const help = `usage: sbx on-event --standing POLICY --held CHAIN --minter FILE --mints DIR
                   --key FILE --trust DID|FILE… --ledger DIR [--events FILE|-] [--pending]
                   [--out DIR] [--memory BYTES] [--cpus N] [--pids N] [--timeout-ms N] [--json] -- CMD [ARGS…]
  Standing grants drive runs (jcp §4.6): reads events, one JSON value per line (bare, or signed as
  application/vnd.jcp.event+json), from FILE or standard input. For each event, as it arrives, it
  mints a child of the held grant under the mint policy POLICY, signed by the minter, on the mint
  ledger DIR (an append-only folder; the trigger, the event's uniqueness, the caps and the rate are
  checked on the very head the entry is appended to, so concurrent minters cannot pass them), and
  then runs CMD under that child as sbx run --grant does: the chain verified against --trust, the
  child's /fs/… and /net/127.0.0.1/PORT resources the only things reachable (/fs/work/** is needed),
  its budget (and every budget above it, the held grant's included) enforced live, the energy
  debited on --ledger. Runs start one after another, in the order of the events.
  An event the policy does not admit mints nothing and starts nothing; it is reported with its code:
  RateExceeded, MintCapExceeded, MintBudgetExceeded, EventReplayed, TriggerMismatch, BadEvent
  (also for a line that is not JSON), NotYetValid, Expired, or the code that refused the run's start
  (BudgetExhausted when nothing is left of a budget above the child, GrantsInsufficient, …).
  Nothing minted is lost on a crash: right before a child's run starts, its start is claimed on the
  mint ledger's run log (DIR/runs/, append-only), so exactly one process ever starts it. A child
  whose minter died before its run started is run when its event is fed again (instead of
  EventReplayed; its line says "recovered") or by --pending; the mint is not made again, so the
  rate and the caps count it once. A replayed event whose child's run was started by a process that
  is still alive is refused RunInProgress; by one that died before the run's end was written,
  RunInterrupted (the command may have run in part: it is not started again unless
  --rerun-interrupted asks for it). A child whose start another process claimed first is refused
  RunClaimed (that process runs it).
  --standing POLICY  the mint policy (jcp standing create), signed by the held grant's issuer
  --held CHAIN     the held grant's chain (root first); the policy names its leaf
  --minter FILE    the held grant's holder's key: signs the children and the ledger entries
  --mints DIR      the mint ledger (jcp standing verify --ledger DIR checks it)
  --key FILE       the metering host's key: signs energy receipts, attestations and debits
  --trust DID|FILE trusted root issuer of the held chain (repeatable)
  --ledger DIR     the spend ledger every run is debited on
  --events FILE|-  the events, one per line (default: standard input; with --pending, none)
  --pending        first run every child on the mint ledger whose run never started, in mint
                   order, and report each child whose run was interrupted (RunInterrupted)
  --rerun-interrupted  start again, once, a child whose run was interrupted (its starter died
                   before the run ended): with --pending, or when its event is fed again. The
                   command may then run a second time; it runs in DIR/<mint seq>.rerun-<pid>/
  --out DIR        keep each minted child's chain, workspace and record in DIR/<mint seq>/ (the
                   entry's position in the mint ledger, so a later invocation never reuses one)
                   (grant.chain, work/, run/ as sbx run --out writes it)
  --memory, --cpus, --pids, --timeout-ms  as sbx run, for every run
  --json           one JSON object per event as it is handled, then a summary object
exit: 0 every event minted a child and its run exited 0; 1 an event was refused or a run did not
      exit 0; 2 usage error`;

export const command: Command = {
  name: "on-event",
  summary: "mint a child of a standing grant per event and run a command under it (jcp §4.6)",
  help,
  async run(args, io) {
    const { values: v, positionals } = parseOptions(args, {
      standing: { type: "string" },
      held: { type: "string" },
      minter: { type: "string" },
      mints: { type: "string" },
      key: { type: "string" },
      trust: { type: "string", multiple: true },
      ledger: { type: "string" },
      events: { type: "string" },
      out: { type: "string" },
      memory: { type: "string" },
      cpus: { type: "string" },
      pids: { type: "string" },
      "timeout-ms": { type: "string" },
      json: { type: "boolean" },
      pending: { type: "boolean" },
      "rerun-interrupted": { type: "boolean" },
    });
    const need = ["standing", "held", "minter", "mints", "key", "trust", "ledger"] as const;
    const missing = need.filter((k) => v[k] === undefined);
    if (missing.length) throw new UsageError(`missing --${missing.join(", --")}`);
    if (positionals.length === 0) throw new UsageError("a command after -- is required");
    const roots = v.trust!.map((t) => readPrincipal(t, "--trust"));
    const standing = { policy: readJson(v.standing!, "mint policy"), held: readChain(v.held!) };
    const minter = readKey(v.minter!);
    readKey(v.key!); // unusable before any event is read, not at the first run
    const passed = (["memory", "cpus", "pids", "timeout-ms"] as const).flatMap((k) =>
      v[k] === undefined ? [] : [`--${k}`, v[k]],
    );
    if (v.out !== undefined) mkdirSync(v.out, { recursive: true });
    const scratch = v.out === undefined ? mkdtempSync(join(tmpdir(), "sbx-on-event-")) : null;

    const state = { stopping: false };
    const stop = () => {
      state.stopping = true;
    };
    process.on("SIGINT", stop).on("SIGTERM", stop);
    const results: EventResult[] = [];
    const report = (r: EventResult) => {
      results.push(r);
      const what = r.n === 0 ? `pending mint ${r.mint_seq ?? 0}` : `event ${r.n}`;
      if (v.json) io.out(JSON.stringify(r));
      else if (r.status === "refused")
        io.out(`${what} ${r.event ?? "(unreadable)"}: refused ${r.code ?? ""}: ${r.message ?? ""}`);
      else {
        const run = r.run as {
          outcome?: { status?: string; stopped?: string };
          energy?: { total_uj?: string };
        };
        io.out(
          `${what} ${r.event ?? ""}: ${r.recovered ? "recovered" : "minted"} child ${r.child ?? ""} (mint ${r.mint_seq ?? 0}), ran: ${run.outcome?.status ?? "?"}${run.outcome?.stopped ? ` (${run.outcome.stopped})` : ""}, exit ${r.exit ?? "?"}, ${run.energy?.total_uj ?? "?"} µJ`,
        );
      }
    };

    // One run at a time, in the order of the events; minting does not wait for runs. Each run's
    // start is claimed on the run log first (on-event-runs.ts), so no child is ever run twice.
    let queue: Promise<void> = Promise.resolve();
    const queued = new Set<number>(); // mint positions this invocation has queued a run for
    const runUnder = async (
      n: number,
      event: string,
      child: string,
      seq: number,
      chain: readonly Envelope[],
      recovered: boolean,
      rerun: boolean,
    ) => {
      const which = { n, event, child, mint_seq: seq, ...(recovered ? { recovered: true as const } : {}) };
      if (state.stopping) {
        report({
          ...which,
          status: "refused",
          code: "Interrupted",
          message: "stopped before its run; its child is not started: sbx on-event --pending runs it",
        });
        return;
      }
      let holder;
      try {
        holder = claimRun(
          v.mints!,
          { seq, child: child as Digest, event: event as Digest },
          undefined,
          rerun,
        );
      } catch (e) {
        report({ ...which, status: "refused", ...codeOf(e) });
        return;
      }
      if (holder !== null) {
        report({
          ...which,
          status: "refused",
          code: "RunClaimed",
          message: `another sbx on-event (pid ${String(holder.pid)}) started its run first`,
        });
        return;
      }
      faultPoint("on-event:run-claimed"); // crash tests: started on the run log, the run not yet begun
      let r: EventResult;
      try {
        // (Inside the try: whatever refuses this run is reported, and its end written.)
        const dir = join(
          v.out ?? scratch!,
          rerun ? `${String(seq)}.rerun-${String(process.pid)}` : String(seq),
        );
        mkdirSync(dir, { recursive: true });
        const chainFile = join(dir, "grant.chain");
        writeJson(chainFile, chain);
        const work = v.out === undefined ? [] : ["--workspace", join(dir, "work"), "--out", join(dir, "run")];
        if (v.out !== undefined) mkdirSync(join(dir, "work"), { recursive: true });
        const out: string[] = [];
        const sub: Io = {
          out: (l) => out.push(l),
          err: (l) => io.err(l),
          ...(io.bytes ? { bytes: (_to, d) => io.bytes!("err", d) } : {}),
        };
        const exit = await runCommand.run(
          [
            ...["--key", v.key!, "--grant", chainFile, ...roots.flatMap((x) => ["--trust", x])],
            ...["--ledger", v.ledger!, ...work, ...passed, "--json", "--", ...positionals],
          ],
          sub,
        );
        r = { ...which, status: "ran", run: JSON.parse(out.join("\n")) as unknown, exit };
      } catch (e) {
        r = { ...which, status: "refused", ...codeOf(e) };
      }
      try {
        endRun(
          v.mints!,
          { seq, child: child as Digest },
          {
            status: r.status,
            ...(r.code !== undefined ? { code: r.code } : {}),
            ...(r.exit !== undefined ? { exit: r.exit } : {}),
          },
        );
      } catch (e) {
        io.err(`sbx on-event: mint ${String(seq)}: its run's end could not be written: ${codeOf(e).message}`);
      }
      report(r);
    };
    const rerunAsked = v["rerun-interrupted"] === true;
    const enqueue = (n: number, m: MintedRun, recovered: boolean) => {
      queued.add(m.seq);
      const rerun = m.state === "interrupted";
      queue = queue.then(() => runUnder(n, m.event, m.child, m.seq, m.chain, recovered, rerun));
    };
    const runnable = (m: MintedRun) => m.state === "unclaimed" || (rerunAsked && m.state === "interrupted");
    const refusedRun = (n: number, m: MintedRun): EventResult | null => {
      const which = { n, event: m.event, child: m.child, mint_seq: m.seq };
      if (m.state === "running")
        return {
          ...which,
          status: "refused",
          code: "RunInProgress",
          message: `its child's run was started by sbx on-event pid ${String(m.holder?.pid ?? 0)}, still running`,
        };
      if (m.state === "interrupted")
        return {
          ...which,
          status: "refused",
          code: "RunInterrupted",
          message: `its child's run was started by pid ${String(m.holder?.pid ?? 0)}, which died before the run ended; the command may have run in part, so it is not started again`,
        };
      return null;
    };
    const standingRuns = () => mintedRuns(v.mints!, standing, minter, { roots });

    if (
      v.events !== undefined &&
      v.events !== "-" &&
      statSync(v.events, { throwIfNoEntry: false })?.isFile() !== true
    )
      throw new CliError("Unreadable", `--events ${v.events} is not a readable file`);
    // With --pending and no --events, only the pending children are run.
    const input =
      v.pending && v.events === undefined
        ? null
        : v.events === undefined || v.events === "-"
          ? process.stdin
          : createReadStream(v.events, { encoding: "utf8" });
    let n = 0;
    let minted = 0;
    try {
      if (v.pending) {
        for (const m of standingRuns()) {
          if (runnable(m)) enqueue(0, m, true);
          else {
            const r = refusedRun(0, m);
            if (r !== null) report(r);
          }
        }
      } else {
        // Say so when an earlier invocation left children unrun; the events then report any refusal.
        let left: MintedRun[] = [];
        try {
          left = standingRuns().filter((m) => m.state === "unclaimed" || m.state === "interrupted");
        } catch {
          left = [];
        }
        if (left.length > 0)
          io.err(
            `sbx on-event: ${String(left.length)} minted child${left.length > 1 ? "ren have" : " has"} no finished run (mint ${left.map((m) => `${String(m.seq)} ${m.state}`).join(", ")}): feed the event again or use --pending`,
          );
      }
      const lines = input === null ? [] : createInterface({ input, crlfDelay: Infinity });
      for await (const line of lines) {
        if (state.stopping) break;
        if (line.trim() === "") continue;
        n++;
        let event: unknown;
        let address: string | null = null;
        try {
          if (line.length > MAX_EVENT_LINE)
            throw new UsageError(`event ${n} is longer than ${MAX_EVENT_LINE}`);
          event = parseStrict(line, { maxBytes: MAX_EVENT_LINE, maxDepth: 32 });
          address = eventAddress(event);
        } catch (e) {
          report({ n, event: null, status: "refused", code: "BadEvent", message: codeOf(e).message });
          continue;
        }
        try {
          const m = mintOn(v.mints!, standing, minter, event, () => Date.now(), { roots });
          faultPoint("on-event:minted"); // crash tests: the child on the mint ledger, its run not started
          minted++;
          enqueue(
            n,
            {
              seq: m.seq,
              child: m.childAddress,
              event: address as Digest,
              chain: m.chain as Envelope[],
              state: "unclaimed",
            },
            false,
          );
        } catch (e) {
          // The same event again: run its child if its minter died before starting it.
          let c = codeOf(e);
          let m: MintedRun | undefined;
          try {
            if (c.code === "EventReplayed") m = standingRuns().find((x) => x.event === address);
          } catch (e2) {
            c = codeOf(e2);
          }
          // (A child this invocation queued is its own: the event is simply replayed.)
          if (m !== undefined && queued.has(m.seq)) m = undefined;
          if (m !== undefined && runnable(m)) enqueue(n, m, true);
          else report((m && refusedRun(n, m)) ?? { n, event: address, status: "refused", ...c });
        }
      }
      await queue;
    } finally {
      process.off("SIGINT", stop).off("SIGTERM", stop);
      if (scratch !== null) rmSync(scratch, { recursive: true, force: true });
    }
    const refused: Record<string, number> = {};
    for (const r of results)
      if (r.status === "refused") refused[r.code ?? "Error"] = (refused[r.code ?? "Error"] ?? 0) + 1;
    const ran = results.filter((r) => r.status === "ran");
    const recovered = results.filter((r) => r.recovered === true).length;
    const summary = {
      events: n,
      minted,
      ran: ran.length,
      ...(recovered > 0 ? { recovered } : {}),
      refused,
    };
    if (v.json) io.out(JSON.stringify({ summary }));
    else
      io.out(
        `${summary.events} events: ${summary.minted} minted, ${summary.ran} ran${recovered > 0 ? ` (${String(recovered)} recovered)` : ""}, refused ${
          Object.entries(refused)
            .map(([c, k]) => `${c} ${k}`)
            .join(", ") || "none"
        }`,
      );
    const allOk =
      results.filter((r) => r.n > 0).length === n &&
      results.every((r) => r.status === "ran" && r.exit === EXIT.ok);
    return allOk ? EXIT.ok : EXIT.invalid;
  },
};
