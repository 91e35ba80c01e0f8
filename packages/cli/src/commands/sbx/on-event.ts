// `sbx on-event --standing POLICY -- CMD…`: standing grants drive runs (jcp §4.6, sandbox-attest
// §5.6). Each event read (one JSON value per line) mints a child of the held grant through the mint
// ledger, on the append-only log (jcp/lib/mintlog.ts: the caps and the rate are checked on the head
// the entry is appended to, so concurrent minters cannot pass them), and starts a governed run
// under it: `sbx run --grant CHILD` (./run.ts, ./grant.ts), whose scopes bind the sandbox, whose
// budget is enforced live and whose energy is debited on the spend ledger. An event the policy does
// not admit mints nothing and starts nothing; it is reported with the refusal's code. Events are
// minted when they arrive (the rate counts arrivals) and their runs start one after another.
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseStrict, type Envelope } from "@sbx/wire";
import { eventAddress } from "@sbx/jcp-grant/standing";
import { EXIT, parseOptions, UsageError, type Command, type Io } from "../../command.ts";
import { CliError } from "../../errors.ts";
import { readKey, readPrincipal } from "../../keyfile.ts";
import { readChain, readJson, writeJson } from "../jcp/lib/files.ts";
import { mintOn } from "../jcp/lib/mintlog.ts";
import { command as runCommand } from "./run.ts";

const MAX_EVENT_LINE = 64 << 10;

/** What became of one event. */
export interface EventResult {
  /** 1-based position of the event in the input. */
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
}

function codeOf(e: unknown): { code: string; message: string } {
  const code = (e as { code?: unknown } | null)?.code;
  return {
    code: typeof code === "string" ? code : "Error",
    message: e instanceof Error ? e.message : String(e),
  };
}

const help = `usage: sbx on-event --standing POLICY --held CHAIN --minter FILE --mints DIR
                   --key FILE --trust DID|FILE… --ledger DIR [--events FILE|-] [--out DIR]
                   [--memory BYTES] [--cpus N] [--pids N] [--timeout-ms N] [--json] -- CMD [ARGS…]
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
  --standing POLICY  the mint policy (jcp standing create), signed by the held grant's issuer
  --held CHAIN     the held grant's chain (root first); the policy names its leaf
  --minter FILE    the held grant's holder's key: signs the children and the ledger entries
  --mints DIR      the mint ledger (jcp standing verify --ledger DIR checks it)
  --key FILE       the metering host's key: signs energy receipts, attestations and debits
  --trust DID|FILE trusted root issuer of the held chain (repeatable)
  --ledger DIR     the spend ledger every run is debited on
  --events FILE|-  the events, one per line (default: standard input)
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
      if (v.json) io.out(JSON.stringify(r));
      else if (r.status === "refused")
        io.out(`event ${r.n} ${r.event ?? "(unreadable)"}: refused ${r.code ?? ""}: ${r.message ?? ""}`);
      else {
        const run = r.run as {
          outcome?: { status?: string; stopped?: string };
          energy?: { total_uj?: string };
        };
        io.out(
          `event ${r.n} ${r.event ?? ""}: minted child ${r.child ?? ""} (mint ${r.mint_seq ?? 0}), ran: ${run.outcome?.status ?? "?"}${run.outcome?.stopped ? ` (${run.outcome.stopped})` : ""}, exit ${r.exit ?? "?"}, ${run.energy?.total_uj ?? "?"} µJ`,
        );
      }
    };

    // One run at a time, in the order of the events; minting does not wait for runs.
    let queue: Promise<void> = Promise.resolve();
    const runUnder = async (
      n: number,
      event: string,
      child: string,
      seq: number,
      chain: readonly Envelope[],
    ) => {
      const dir = join(v.out ?? scratch!, String(seq));
      mkdirSync(dir, { recursive: true });
      const chainFile = join(dir, "grant.chain");
      writeJson(chainFile, chain);
      if (state.stopping) {
        report({
          n,
          event,
          status: "refused",
          code: "Interrupted",
          message: "stopped before its run",
          child,
          mint_seq: seq,
        });
        return;
      }
      const work = v.out === undefined ? [] : ["--workspace", join(dir, "work"), "--out", join(dir, "run")];
      if (v.out !== undefined) mkdirSync(join(dir, "work"), { recursive: true });
      const out: string[] = [];
      const sub: Io = {
        out: (l) => out.push(l),
        err: (l) => io.err(l),
        ...(io.bytes ? { bytes: (_to, d) => io.bytes!("err", d) } : {}),
      };
      try {
        const exit = await runCommand.run(
          [
            ...["--key", v.key!, "--grant", chainFile, ...roots.flatMap((r) => ["--trust", r])],
            ...["--ledger", v.ledger!, ...work, ...passed, "--json", "--", ...positionals],
          ],
          sub,
        );
        report({
          n,
          event,
          status: "ran",
          child,
          mint_seq: seq,
          run: JSON.parse(out.join("\n")) as unknown,
          exit,
        });
      } catch (e) {
        report({ n, event, status: "refused", ...codeOf(e), child, mint_seq: seq });
      }
    };

    if (
      v.events !== undefined &&
      v.events !== "-" &&
      statSync(v.events, { throwIfNoEntry: false })?.isFile() !== true
    )
      throw new CliError("Unreadable", `--events ${v.events} is not a readable file`);
    const input =
      v.events === undefined || v.events === "-"
        ? process.stdin
        : createReadStream(v.events, { encoding: "utf8" });
    const lines = createInterface({ input, crlfDelay: Infinity });
    let n = 0;
    try {
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
          const k = n;
          const ev = address;
          queue = queue.then(() => runUnder(k, ev, m.childAddress, m.seq, m.chain as Envelope[]));
        } catch (e) {
          report({ n, event: address, status: "refused", ...codeOf(e) });
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
    const summary = {
      events: n,
      minted: results.filter((r) => r.child !== undefined).length,
      ran: ran.length,
      refused,
    };
    if (v.json) io.out(JSON.stringify({ summary }));
    else
      io.out(
        `${summary.events} events: ${summary.minted} minted, ${summary.ran} ran, refused ${
          Object.entries(refused)
            .map(([c, k]) => `${c} ${k}`)
            .join(", ") || "none"
        }`,
      );
    const allOk = results.length === n && results.every((r) => r.status === "ran" && r.exit === EXIT.ok);
    return allOk ? EXIT.ok : EXIT.invalid;
  },
};
