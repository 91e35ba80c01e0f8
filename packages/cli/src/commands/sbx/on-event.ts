// `sbx on-event --standing POLICY -- CMD…`: standing grants drive runs (jcp §4.6, sandbox-attest
// §5.6). The flags are read here; the loop is the host's StandingDriver (@sbx/host/standing), whose
// runs are childRunner's: each minted child's command run in process as `sbx run --grant CHILD`
// runs it (runGranted), never by argv. Signals stay here: SIGINT or SIGTERM stops the run that is
// going (attested) and starts no further one.
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { readKey, readPrincipal } from "@sbx/host/keys";
import { childRunner, StandingDriver, type EventResult } from "@sbx/host/standing";
import { EXIT, parseOptions, UsageError, writeBytes, type Command, type Io } from "../../command.ts";
import { CliError } from "../../errors.ts";
import { readChain, readJson } from "../jcp/lib/files.ts";
import { sandboxLimits, timeoutOpt } from "../../flags/sandbox.ts";

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
    const hostKey = readKey(v.key!); // unusable before any event is read, not at the first run
    const limits = sandboxLimits(v);
    const timeoutMs = timeoutOpt(v["timeout-ms"]);
    const events = eventsOf(v.events, v.pending === true);
    if (v.out !== undefined) mkdirSync(v.out, { recursive: true });
    const dir = v.out === undefined ? mkdtempSync(join(tmpdir(), "sbx-on-event-")) : resolve(v.out);

    const abort = new AbortController();
    const stop = () => {
      abort.abort();
    };
    process.on("SIGINT", stop).on("SIGTERM", stop);
    const driver = new StandingDriver({
      mints: v.mints!,
      standing,
      minter,
      roots,
      dir,
      rerunInterrupted: v["rerun-interrupted"] === true,
      abort: abort.signal,
      report: (r) => {
        io.out(v.json ? JSON.stringify(r) : resultLine(r));
      },
      warn: (l) => {
        io.err(l);
      },
      // The runs' own output goes to stderr: stdout carries the results.
      run: childRunner({
        hostKey,
        roots,
        ledger: v.ledger!,
        argv: positionals,
        limits,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        keepRecord: v.out !== undefined,
        abort: abort.signal,
        onOutput: (_stream, data) => {
          writeBytes(io, "err", data);
        },
      }),
    });
    try {
      if (v.pending) driver.pending();
      else sayLeftOver(driver, io);
      for await (const line of events === null ? [] : lines(events)) {
        if (abort.signal.aborted) break;
        if (line.trim() !== "") driver.feed(line);
      }
      await driver.drain();
    } finally {
      process.off("SIGINT", stop).off("SIGTERM", stop);
      if (v.out === undefined) rmSync(dir, { recursive: true, force: true });
    }
    const summary = driver.summary();
    io.out(v.json ? JSON.stringify({ summary }) : summaryLine(summary));
    return driver.ok() ? EXIT.ok : EXIT.invalid;
  },
};

// The events' input: --events FILE (a readable file, else Unreadable), standard input for none or
// `-`, nothing with --pending and no --events.
function eventsOf(path: string | undefined, pending: boolean): NodeJS.ReadableStream | null {
  if (path !== undefined && path !== "-" && statSync(path, { throwIfNoEntry: false })?.isFile() !== true)
    throw new CliError("Unreadable", `--events ${path} is not a readable file`);
  if (pending && path === undefined) return null;
  return path === undefined || path === "-" ? process.stdin : createReadStream(path, { encoding: "utf8" });
}

function lines(input: NodeJS.ReadableStream): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Infinity });
}

// Says so when an earlier invocation left children unrun; the events then report any refusal.
function sayLeftOver(driver: StandingDriver, io: Io): void {
  const left = driver.leftOver();
  if (left.length > 0)
    io.err(
      `sbx on-event: ${String(left.length)} minted child${left.length > 1 ? "ren have" : " has"} no finished run (mint ${left.map((m) => `${String(m.seq)} ${m.state}`).join(", ")}): feed the event again or use --pending`,
    );
}

function resultLine(r: EventResult): string {
  const what = r.n === 0 ? `pending mint ${String(r.mint_seq ?? 0)}` : `event ${String(r.n)}`;
  if (r.status === "refused")
    return `${what} ${r.event ?? "(unreadable)"}: refused ${r.code ?? ""}: ${r.message ?? ""}`;
  const run = r.run as { outcome?: { status?: string; stopped?: string }; energy?: { total_uj?: string } };
  const stopped = run.outcome?.stopped ? ` (${run.outcome.stopped})` : "";
  return `${what} ${r.event ?? ""}: ${r.recovered ? "recovered" : "minted"} child ${r.child ?? ""} (mint ${String(r.mint_seq ?? 0)}), ran: ${run.outcome?.status ?? "?"}${stopped}, exit ${String(r.exit ?? "?")}, ${run.energy?.total_uj ?? "?"} µJ`;
}

function summaryLine(s: ReturnType<StandingDriver["summary"]>): string {
  const refused =
    Object.entries(s.refused)
      .map(([c, k]) => `${c} ${String(k)}`)
      .join(", ") || "none";
  const recovered = s.recovered !== undefined ? ` (${String(s.recovered)} recovered)` : "";
  return `${String(s.events)} events: ${String(s.minted)} minted, ${String(s.ran)} ran${recovered}, refused ${refused}`;
}
