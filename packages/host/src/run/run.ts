// The host runner: one real child process run as one active interval of a unit — metered (§6),
// journaled (§8), and attested (§7), optionally linked into the steward's audit chain (§7.7) and
// continuing a run record's head (§13).
import type { ChildProcess, SpawnOptions } from "node:child_process";
import { addressOf, digestBytes, envelopeAddress, type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import {
  signAttestation,
  type LimitName,
  type Outcome,
  type PredicateInput,
} from "@sbx/sandbox-attest/attestation";
import type { AuditLink } from "@sbx/sandbox-attest/audit";
import {
  makeReceipt,
  startEnergyChain,
  weakestProvenance,
  type EnergyChainState,
  type EnergyComponent,
  type MadeReceipt,
  type MeterReading,
} from "@sbx/sandbox-attest/energy";
import { Journal } from "@sbx/sandbox-attest/journal";
import { makeUnit, type Level } from "@sbx/sandbox-attest/unit";
import { policyAddress, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { startGate, type GateOptions, type GateResult, type GateSession } from "../gate/session.ts";
import type { GateStats } from "../gate/protocol.ts";
import { meterCommand, startMeter, type MeterOptions } from "../meter/index.ts";
import { HostError } from "../errors.ts";
import { providedLevel, statedLevel } from "../sandbox/level.ts";
import type { LimitHits } from "../sandbox/cgroup.ts";
import {
  handOver,
  startSandbox,
  type Provided,
  type Sandbox,
  type SandboxOptions,
} from "../sandbox/sandbox.ts";
import { checkBuiltFrom } from "./built.ts";
import { digestFile, programInSandbox, resolveProgram, type Resolved } from "./program.ts";
import { StreamRecorder, type StreamSummary } from "./stdio.ts";
import { createFilesAt } from "../fsat/index.ts";
import { journalWrites, scanFiles } from "./files.ts";

/** What runUnit needs. */
export interface RunUnitOptions {
  /** The command line; argv[0] is resolved on PATH like execvp. */
  readonly argv: readonly string[];
  /** The working directory of a plain run; a sandboxed run starts in its workspace folder. */
  readonly cwd?: string;
  /** The child's environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** The host key that signs the receipt and the attestation. */
  readonly hostKey: KeyPair;
  readonly unitId: Digest;
  /**
   * The unit descriptor whose address is `unitId`: the attestation's subject carries its BLAKE3 and
   * SHA-256 (§7.1). Default: makeUnit({ argv, manifest, level: maxLevel ?? "S0" }), which must then
   * have that address.
   */
  readonly unit?: unknown;
  readonly grantsId: Digest;
  /** Address of the environment manifest (§14) the unit runs under. */
  readonly manifest: Digest;
  /**
   * The image the manifest `manifest` pins (sha256 hex), or null when it pins none: a sandboxed run
   * is signed only when its sandbox was built from exactly that (built.ts, `SandboxMismatch`).
   */
  readonly pinnedImage?: string | null;
  /** Address of the exec policy (§5.5) in force. */
  readonly policy: Digest;
  /**
   * The exec policy itself (its address must be `policy`): a sandboxed run is then gated (§5.5.5).
   * The gate attaches to the sandbox before the command runs; a run whose gate cannot attach is
   * refused (`GateFailed`), never run ungated; a gate that ends before the sandbox stops it. Only
   * with `sandbox`: a plain process cannot be gated this way (RangeError).
   */
  readonly execPolicy?: ExecPolicy;
  /**
   * How the gate of a gated run is started: its known loaders, answer timeout, stall limit, helper
   * environment, or another build of the helper (the sanitizer build in tests).
   */
  readonly gateOptions?: Pick<GateOptions, "loaders" | "timeoutMs" | "stallMs" | "env" | "helper">;
  /**
   * The unit runs in a sandbox built from these options (§5; its workspace is the working directory
   * and is watched), or, when absent, as a plain child process (level S0).
   */
  readonly sandbox?: SandboxOptions;
  /**
   * The most this caller wants stated (§9). The level stated is computed from what the host set up
   * (the sandbox, the meter, the journal, the run head, the audit link); this can only lower it.
   */
  readonly maxLevel?: Level;
  /** The audit link (§7.7): firstLink(domain) or linkAfter(previous attestation). */
  readonly audit?: AuditLink;
  /** The run record head this interval continues from (§13). */
  readonly runHead?: Digest;
  /** The run's energy receipt chain so far (§6.4); default a new chain for (unitId, grantsId). */
  readonly energyChain?: EnergyChainState;
  /** Bytes written to the child's stdin (journaled); default: no stdin. */
  readonly stdin?: Uint8Array;
  /** Kill the child with SIGKILL after this many ms. */
  readonly timeoutMs?: number;
  /** A directory whose new and changed files are journaled as `file.write` (e.g. the workspace). */
  readonly watch?: string;
  /** Aborting stops the unit: SIGTERM to all its processes, SIGKILL after `graceMs` (e.g. on Ctrl-C). */
  readonly abort?: AbortSignal;
  /** The grace period between SIGTERM and SIGKILL after an abort (default 2000 ms). */
  readonly graceMs?: number;
  /** A directory (absent or empty) where stdout and stderr are written as they arrive; then they
   * are not kept in memory (`stdout`/`stderr` of the result are empty). */
  readonly outputDir?: string;
  /** Journal chunk size for stdio (default 64 KiB). */
  readonly chunkBytes?: number;
  readonly meter?: MeterOptions;
  /** Called with each piece of the child's output as it arrives (e.g. to show it live). */
  readonly onOutput?: (stream: "stdout" | "stderr", data: Buffer) => void;
  /**
   * A live check of a sandboxed run (e.g. a grant's budget, jcp §4.3): every `periodMs` the meter
   * is read without closing the interval and `check` is given the interval's energy so far; a code
   * it returns stops the unit (SIGTERM, SIGKILL after min(graceMs, periodMs)) and becomes the
   * outcome's `stopped` (§7.2). See ../grants/live.ts.
   */
  readonly live?: LiveCheck;
  /**
   * Starts the sandbox in place of startSandbox (§15.4: a warm-pool claim hands over its parked
   * sandbox, pool/parked.ts claimSandbox); its command must wait for `proceed(true)`.
   */
  readonly startSandbox?: (
    argv: readonly string[],
    so: SandboxOptions,
    stdin: "ignore" | "pipe",
  ) => Omit<Sandbox, "child"> & { readonly child: Pick<ChildProcess, "stdin" | "stdout" | "stderr"> };
  /** Components the run's energy receipt carries besides the meter's (§15.4 a claim's warmpool charge). */
  readonly extraComponents?: readonly EnergyComponent[];
}

/** What runUnit asks of a live check (RunUnitOptions.live). */
export interface LiveCheck {
  readonly periodMs: number;
  /** Returns null to let the unit go on, or the code it is stopped for (e.g. "BudgetExhausted"). */
  check(total_uj: bigint, reading: MeterReading): string | null;
  /**
   * At the seal: the µJ of `total_uj` (the meter's total, as `check` is given) beyond what is left
   * of the budget now, 0 when within (jcp §4.3 "Overshoot"; the outcome's `overshoot_uj`, §7.2).
   */
  overshoot?(total_uj: bigint): bigint;
}

/**
 * withOvershoot (§7.2 item 2) adds to an interval's outcome the energy it used beyond its budget,
 * as the live check sees it at the seal; the outcome as it was when there is none or it is within.
 */
export function withOvershoot(outcome: Outcome, live: LiveCheck | undefined, reading: MeterReading): Outcome {
  if (live?.overshoot === undefined || outcome.status === "spawn_failed") return outcome;
  const over = live.overshoot(reading.components.reduce((t, c) => t + BigInt(c.uj), 0n));
  return over > 0n ? { ...outcome, overshoot_uj: over.toString() } : outcome;
}

/** What a run produced: the signed attestation, the receipt, the journal, the outcome and output. */
export interface RunUnitResult {
  readonly attestation: Envelope;
  /** The attestation's address (what `audit_prev` and a run-record segment cite). */
  readonly address: Digest;
  readonly receipt: MadeReceipt;
  readonly receiptAddress: Digest;
  readonly journal: Journal;
  readonly outcome: Outcome;
  readonly interval: { readonly start_ms: number; readonly end_ms: number };
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  /** Each stream's length, digest and file (when `outputDir` was given). */
  readonly streams: { readonly stdout: StreamSummary; readonly stderr: StreamSummary };
  /** Sources the meter looked for and did not find (e.g. "rapl"): why figures are estimated. */
  readonly absent: readonly string[];
  /** The level stated in the attestation (§9), computed from what the host provided. */
  readonly level: Level;
  /** What the sandbox provided, or null for a plain process. */
  readonly provided: Provided | null;
  /** The limits the unit ran into (§5.3): OOM kills, forks refused, workspace over its size. */
  readonly limits: (LimitHits & { readonly disk: boolean }) | null;
  /** The unit's first process as the host numbers it (null when it never started). */
  readonly pid: number | null;
  /** The exec gate of a gated run: mounts marked, its counters, and whether it held the whole interval. */
  readonly gate: GateReport | null;
  /** Why the host stopped the unit (a live check's code), or null. */
  readonly stopped: string | null;
}

/** What the exec gate did for one sandboxed interval (§5.5.5). */
export interface GateReport {
  readonly marked: number;
  readonly stats: GateStats | null;
  /** True when the gate was attached before the command ran and saw the sandbox end (S6). */
  readonly held: boolean;
}

/**
 * runUnit runs `argv` as one interval of a unit and returns its attested record (§7, §6, §8): in a
 * sandbox (§5) when `sandbox` is given, else as a plain child process. The journal holds the
 * process start (argv, pid, digest of the resolved binary), stdout/stderr (and stdin) in fixed-size
 * chunks by digest, the files written under the workspace (or `watch`) by digest, and the exit; the
 * meter's reading of the run's cgroup becomes the run's next signed energy receipt; the
 * attestation binds both with the ids, addresses, outcome and the level the host provided (§9). A
 * program that cannot be executed is an outcome (`spawn_failed`), not an error. Misuse (empty argv)
 * is a RangeError; a sandbox this host cannot build or limit is refused by startSandbox.
 */
export async function runUnit(o: RunUnitOptions): Promise<RunUnitResult> {
  if (o.argv.length === 0) throw new RangeError("runUnit: argv is empty");
  if (o.live !== undefined && o.sandbox === undefined) throw new RangeError("runUnit: live needs a sandbox");
  if (o.execPolicy !== undefined) {
    if (o.sandbox === undefined) throw new RangeError("runUnit: execPolicy needs a sandbox");
    if (policyAddress(o.execPolicy) !== o.policy)
      throw new RangeError("runUnit: policy is not the address of execPolicy");
  }
  const unit = unitOf(o);
  const journal = new Journal();
  if (o.sandbox) {
    const prog = { path: programInSandbox(o.argv[0]!, o.sandbox) };
    return seal(o, journal, await executeSandboxed(o, o.sandbox, journal, prog), unit);
  }
  const cwd = o.cwd ?? process.cwd();
  const env = o.env ?? process.env;
  const prog = resolveProgram(o.argv[0]!, cwd, env.PATH);
  const run = "error" in prog ? notStarted(prog.error) : await execute(o, journal, cwd, env, prog);
  return seal(o, journal, run, unit);
}

/** unitOf returns the descriptor the attestation names; refuses, before anything runs, one whose address is not unitId. */
function unitOf(o: RunUnitOptions): unknown {
  const unit = o.unit ?? makeUnit({ argv: [...o.argv], manifest: o.manifest, level: o.maxLevel ?? "S0" });
  if (addressOf(unit) !== o.unitId)
    throw new RangeError(
      "runUnit: unitId is not the address of options.unit (default makeUnit({ argv, manifest, level: maxLevel ?? S0 }))",
    );
  return unit;
}

interface Executed {
  readonly reading: MeterReading;
  readonly outcome: Outcome;
  readonly streams: { readonly stdout: StreamSummary; readonly stderr: StreamSummary };
  readonly provided: Provided | null;
  readonly limits: (LimitHits & { readonly disk: boolean }) | null;
  readonly pid: number | null;
  readonly gate: GateReport | null;
  readonly stopped?: string | null;
}

/**
 * watchLive reads the meter every period and asks `live.check`; the first code it returns stops the
 * unit: SIGTERM now, SIGKILL one grace later (at most one period, so a unit that ignores SIGTERM
 * runs at most one period past the check). A meter that cannot be read stops it at once with
 * `MeterFailed` (fail closed: a budget that cannot be read is none). One-shot runs (runUnit) and
 * the intervals of a durable run (../durable/livecheck.ts) are watched by this one function.
 */
export function watchLive(
  live: LiveCheck,
  peek: () => MeterReading,
  signal: (s: NodeJS.Signals) => void,
  graceMs: number = live.periodMs,
): { stop(): void; stoppedFor(): string | null } {
  let code: string | null = null;
  let kill: NodeJS.Timeout | null = null;
  const tick = setInterval(() => {
    if (code !== null) return;
    let reading: MeterReading;
    try {
      reading = peek();
    } catch {
      code = "MeterFailed";
      signal("SIGKILL");
      return;
    }
    const total = reading.components.reduce((t, c) => t + BigInt(c.uj), 0n);
    code = live.check(total, reading);
    if (code === null) return;
    signal("SIGTERM");
    kill = setTimeout(
      () => {
        signal("SIGKILL");
      },
      Math.min(graceMs, live.periodMs),
    );
  }, live.periodMs);
  return {
    stop() {
      clearInterval(tick);
      if (kill) clearTimeout(kill);
    },
    stoppedFor: () => code,
  };
}

function emptyStream(): StreamSummary {
  return { bytes: Buffer.alloc(0), length: 0, digest: digestBytes(new Uint8Array(0)), file: null };
}

function notStarted(reason: string, provided: Provided | null = null): Executed {
  const now = Date.now();
  const reading: MeterReading = { start_ms: now, end_ms: now, components: [], absent: [] };
  return {
    reading,
    outcome: { status: "spawn_failed", reason },
    streams: { stdout: emptyStream(), stderr: emptyStream() },
    provided,
    limits: null,
    pid: null,
    gate: null,
  };
}

/** Stops a unit on abort: `term` now, `kill` after the grace period; returns a disposer. */
function stopOnAbort(o: RunUnitOptions, term: () => void, kill: () => void): () => void {
  let grace: NodeJS.Timeout | null = null;
  const onAbort = () => {
    term();
    grace ??= setTimeout(kill, o.graceMs ?? 2000);
  };
  const timer = o.timeoutMs === undefined ? null : setTimeout(kill, o.timeoutMs);
  o.abort?.addEventListener("abort", onAbort);
  if (o.abort?.aborted) onAbort();
  return () => {
    if (timer) clearTimeout(timer);
    if (grace) clearTimeout(grace);
    o.abort?.removeEventListener("abort", onAbort);
  };
}

async function execute(
  o: RunUnitOptions,
  journal: Journal,
  cwd: string,
  env: NodeJS.ProcessEnv,
  prog: Extract<Resolved, { path: string }>,
): Promise<Executed> {
  const before = o.watch === undefined ? null : scanFiles(o.watch);
  const spawnOpts: SpawnOptions = {
    cwd,
    env,
    stdio: [o.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    detached: true,
  };
  const m = meterCommand(o.argv, { ...o.meter, spawn: spawnOpts });
  const pid = m.child.pid;
  if (pid === undefined) {
    // resolveProgram found it executable, yet spawn failed (it vanished, or fork failed).
    await m.done.catch(() => undefined);
    return notStarted("spawn");
  }
  journal.append({ type: "process.start", pid, argv: [...o.argv], binary: digestFile(prog.path) });
  const streams = record(o, journal, m.child);
  const sig = (s: NodeJS.Signals) => () => {
    signalGroup(pid, s);
  };
  const dispose = stopOnAbort(o, sig("SIGTERM"), sig("SIGKILL"));
  const exit = await m.done.finally(dispose);
  const out = finish(streams);
  if (o.watch !== undefined && before !== null) journalWrites(journal, o.watch, before);
  journal.append({ type: "process.exit", pid, code: exit.code, signal: exit.signal });
  const outcome: Outcome =
    exit.signal !== null
      ? { status: "signaled", signal: exit.signal }
      : { status: "exited", exit_code: exit.code ?? 0 };
  return { reading: exit.reading, outcome, streams: out, provided: null, limits: null, pid, gate: null };
}

async function executeSandboxed(
  o: RunUnitOptions,
  so: SandboxOptions,
  journal: Journal,
  prog: Extract<Resolved, { path: string }>,
): Promise<Executed> {
  const watch = o.watch ?? so.workspace;
  if (o.startSandbox === undefined) handOver(so); // before the stamps: not journaled as the unit's
  const before = scanFiles(watch);
  const binary = digestFile(prog.path);
  const gated = o.execPolicy !== undefined;
  const sb = (o.startSandbox ?? startSandbox)(
    o.argv,
    gated ? { ...so, gated } : so,
    o.stdin ? "pipe" : "ignore",
  );
  let gate: GateSession | null = null;
  try {
    const meter = startMeter({ cgroup: sb.meterCgroup }, o.meter);
    const sent: { signal: NodeJS.Signals | null } = { signal: null };
    const send = (s: NodeJS.Signals) => () => {
      sent.signal = s;
      sb.signal(s);
    };
    const disposeAbort = stopOnAbort(o, send("SIGTERM"), send("SIGKILL"));
    const live = o.live
      ? watchLive(
          o.live,
          () => meter.peek(),
          (sig) => send(sig)(),
          o.graceMs ?? 2000,
        )
      : null;
    const dispose = () => {
      disposeAbort();
      live?.stop();
    };
    const pid = await sb.unitPid;
    if (pid !== null) journal.append({ type: "process.start", pid, argv: [...o.argv], binary });
    const streams = record(o, journal, sb.child);
    let gateEnd: Promise<GateResult | null> = Promise.resolve(null);
    if (o.execPolicy !== undefined && pid !== null && (await sb.ready))
      try {
        gate = await startGate({ ...o.gateOptions, policy: o.execPolicy, command: [], attach: pid, journal });
        // Fail closed: a gate that ends (or fails to journal) before the sandbox stops it.
        gateEnd = gate.done.catch(() => null);
        void gateEnd.then((r) => {
          if (r === null || r.stats === null) send("SIGKILL")();
        });
      } catch (e) {
        sb.proceed(false);
        sb.signal("SIGKILL");
        await sb.done.finally(dispose);
        meter.stop();
        finish(streams);
        throw e;
      }
    if (gated && gate === null) {
      // The sandbox ended before it was ready: nothing ran ungated; report why below.
      sb.proceed(false);
      sb.signal("SIGKILL");
    } else sb.proceed(true);
    const exit = await sb.done.finally(dispose);
    const reading = meter.stop();
    const gateResult = await gateEnd;
    const out = finish(streams);
    if (exit.setupFailed || (gated && gate === null)) {
      // No interval ran: nothing is attested, and the host says why (fail closed).
      const why = out.stderr.bytes.toString().trim().slice(0, 500) || `launcher exited ${String(exit.code)}`;
      throw new HostError("SandboxFailed", `the sandbox could not be set up: ${why}`);
    }
    if (pid === null) throw new HostError("SandboxFailed", "bwrap reported no process");
    journalWrites(journal, watch, before);
    const stoppedFor = live?.stoppedFor() ?? null;
    const ended = withLimits(sandboxOutcome(exit.code, sent.signal, exit.hits.oomKills), exit.hits);
    const outcome: Outcome = withOvershoot(
      stoppedFor !== null && ended.status !== "spawn_failed" ? { ...ended, stopped: stoppedFor } : ended,
      o.live,
      reading,
    );
    const signal = outcome.status === "signaled" ? outcome.signal : null;
    journal.append({ type: "process.exit", pid, code: signal === null ? exit.code : null, signal });
    const report: GateReport | null =
      gate === null
        ? null
        : {
            marked: gate.marked,
            stats: gateResult?.stats ?? null,
            held: gateResult !== null && gateResult.stats !== null && gateResult.helperCode === 0,
          };
    return {
      reading,
      outcome,
      streams: out,
      provided: sb.provided,
      limits: exit.hits,
      pid,
      gate: report,
      stopped: stoppedFor,
    };
  } finally {
    if (gate !== null) gate.stop();
    await sb.release();
  }
}

const SIGNALS: Readonly<Record<number, NodeJS.Signals>> = { 9: "SIGKILL", 15: "SIGTERM" };

/**
 * sandboxOutcome (§7.2) turns bwrap's exit code into an outcome. bwrap reports a command killed by
 * signal N as 128+N, which a command can also exit with; so it is read as a signal only where the
 * host knows one was delivered: one it sent itself, or the OOM killer's SIGKILL (counted by the
 * cgroup). Anything else is the exit code bwrap reported.
 */
function sandboxOutcome(code: number | null, sent: NodeJS.Signals | null, oomKills: number): Outcome {
  const byCode = code !== null && code > 128 ? SIGNALS[code - 128] : undefined;
  if (
    byCode !== undefined &&
    (byCode === sent || sent === "SIGKILL" || (byCode === "SIGKILL" && oomKills > 0))
  )
    return { status: "signaled", signal: byCode };
  if (code === null) return { status: "signaled", signal: sent ?? "SIGKILL" };
  return { status: "exited", exit_code: code };
}

/**
 * withLimits (§5.3 item 3, §7.2 item 2) records in the outcome the limits the unit ran into, as the
 * kernel counted them: an OOM kill (memory), a refused fork (pids), the workspace past its bound
 * (disk). An interval that hit none keeps its outcome as it was.
 */
function withLimits(o: Outcome, h: LimitHits & { readonly disk: boolean }): Outcome {
  const hit: LimitName[] = [];
  if (h.disk) hit.push("disk");
  if (h.oomKills > 0) hit.push("memory");
  if (h.pidsRefused > 0) hit.push("pids");
  return hit.length === 0 || o.status === "spawn_failed" ? o : { ...o, limits: hit };
}

function record(
  o: RunUnitOptions,
  journal: Journal,
  child: Pick<ChildProcess, "stdin" | "stdout" | "stderr">,
) {
  if (o.stdin && child.stdin) {
    const input = new StreamRecorder(journal, "stdin", o.chunkBytes);
    input.push(Buffer.from(o.stdin));
    input.finish();
    child.stdin.on("error", () => undefined); // a child that exits without reading its input
    child.stdin.end(Buffer.from(o.stdin));
  }
  // --out DIR may lie in a workspace the unit controls: the files are created relative to DIR's
  // descriptor, exclusively and never through a link (UnsafePath), before any byte is written.
  const files = o.outputDir === undefined ? null : createFilesAt(o.outputDir, ["stdout", "stderr"], 0o600);
  const out = {
    stdout: new StreamRecorder(journal, "stdout", o.chunkBytes, files?.[0]?.path ?? null, files?.[0]?.fd),
    stderr: new StreamRecorder(journal, "stderr", o.chunkBytes, files?.[1]?.path ?? null, files?.[1]?.fd),
  };
  for (const s of ["stdout", "stderr"] as const)
    child[s]?.on("data", (d: Buffer) => {
      out[s].push(d);
      o.onOutput?.(s, d);
    });
  return out;
}

function finish(r: ReturnType<typeof record>) {
  return { stdout: r.stdout.finish(), stderr: r.stderr.finish() };
}

/** signalGroup signals the child's whole process group (it was spawned detached, as its leader), so a
 * grandchild holding the output pipes cannot keep the run open past its timeout. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function seal(o: RunUnitOptions, journal: Journal, run: Executed, unit: unknown): RunUnitResult {
  if (o.pinnedImage !== undefined) checkBuiltFrom(run.provided, o.pinnedImage);
  const chain = o.energyChain ?? startEnergyChain(o.unitId, o.grantsId);
  const receipt = makeReceipt(chain, run.reading, o.hostKey, o.extraComponents);
  const receiptAddress = envelopeAddress(receipt.envelope);
  const head = journal.head();
  const interval = { start_ms: run.reading.start_ms, end_ms: run.reading.end_ms };
  // §9: the level comes from what was set up for this interval, never from the caller.
  const provided = providedLevel({
    isolated: run.provided !== null,
    metered: true,
    attested: true,
    journaled: true,
    snapshots: o.runHead !== undefined,
    processControl: run.gate?.held === true,
    auditChain: o.audit !== undefined,
  });
  const level = statedLevel(provided, o.maxLevel);
  const predicate: PredicateInput = {
    unit_id: o.unitId,
    grants_id: o.grantsId,
    manifest: o.manifest,
    exec_policy: o.policy,
    energy: {
      receipt: receiptAddress,
      total_uj: receipt.receipt.total_uj,
      provenance: weakestProvenance(receipt.receipt.components),
    },
    journal: { root: head.root, events: head.size },
    outcome: run.outcome,
    interval,
    level,
    ...(o.audit ?? {}),
    ...(o.runHead ? { run_head: o.runHead } : {}),
  };
  const attestation = signAttestation(predicate, o.hostKey, unit);
  return {
    attestation,
    address: envelopeAddress(attestation),
    receipt,
    receiptAddress,
    journal,
    outcome: run.outcome,
    interval,
    stdout: run.streams.stdout.bytes,
    stderr: run.streams.stderr.bytes,
    streams: run.streams,
    absent: run.reading.absent,
    level,
    provided: run.provided,
    limits: run.limits,
    pid: run.pid,
    gate: run.gate,
    stopped: run.stopped ?? null,
  };
}
