// The host runner: one real child process run as one active interval of a unit — metered (§6),
// journaled (§8), and attested (§7), optionally linked into the steward's audit chain (§7.7) and
// continuing a run record's head (§13).
import type { SpawnOptions } from "node:child_process";
import { addressOf, envelopeAddress, type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import { signAttestation, type Outcome, type PredicateInput } from "@sbx/sandbox-attest/attestation";
import type { AuditLink } from "@sbx/sandbox-attest/audit";
import {
  makeReceipt,
  startEnergyChain,
  weakestProvenance,
  type EnergyChainState,
  type MadeReceipt,
  type MeterReading,
} from "@sbx/sandbox-attest/energy";
import { Journal } from "@sbx/sandbox-attest/journal";
import { makeUnit, type Level } from "@sbx/sandbox-attest/unit";
import { meterCommand, type MeterOptions, type MeteredExit } from "../meter/index.ts";
import { digestFile, resolveProgram } from "./program.ts";
import { StreamRecorder } from "./stdio.ts";
import { journalWrites, scanFiles } from "./files.ts";

/** What runUnit needs. */
export interface RunUnitOptions {
  /** The command line; argv[0] is resolved on PATH like execvp. */
  readonly argv: readonly string[];
  readonly cwd?: string;
  /** The child's environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** The host key that signs the receipt and the attestation. */
  readonly hostKey: KeyPair;
  readonly unitId: Digest;
  /**
   * The unit descriptor whose address is `unitId`: the attestation's subject carries its BLAKE3 and
   * SHA-256 (§7.1). Default: makeUnit({ argv, manifest, level }), which must then have that address.
   */
  readonly unit?: unknown;
  readonly grantsId: Digest;
  /** Address of the environment manifest (§14) the unit runs under. */
  readonly manifest: Digest;
  /** Address of the exec policy (§5.5) in force. */
  readonly policy: Digest;
  /** The executor level this host states (§9); the caller states only what it provides. */
  readonly level: Level;
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
  /** Aborting kills the child's process group with SIGKILL (e.g. on the caller's SIGINT). */
  readonly abort?: AbortSignal;
  /** Journal chunk size for stdio (default 64 KiB). */
  readonly chunkBytes?: number;
  readonly meter?: MeterOptions;
  /** Called with each piece of the child's output as it arrives (e.g. to show it live). */
  readonly onOutput?: (stream: "stdout" | "stderr", data: Buffer) => void;
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
  /** Sources the meter looked for and did not find (e.g. "rapl"): why figures are estimated. */
  readonly absent: readonly string[];
}

/**
 * runUnit runs `argv` as a child process and returns its attested record (§7, §6, §8): the journal
 * holds the process start (argv, pid, digest of the resolved binary), stdout/stderr (and stdin) in
 * fixed-size chunks by digest, the files written under `watch` by digest, and the exit; the meter's reading becomes the run's next signed
 * energy receipt; the attestation binds both with the ids, addresses and outcome. A program that
 * cannot be executed is an outcome (`spawn_failed`), not an error, with an empty journal and a
 * zero receipt. Misuse (empty argv) is a RangeError.
 */
export async function runUnit(o: RunUnitOptions): Promise<RunUnitResult> {
  if (o.argv.length === 0) throw new RangeError("runUnit: argv is empty");
  const unit = unitOf(o);
  const cwd = o.cwd ?? process.cwd();
  const env = o.env ?? process.env;
  const journal = new Journal();
  const prog = resolveProgram(o.argv[0]!, cwd, env.PATH);
  const run =
    "error" in prog ? notStarted(prog.error) : await execute(o, journal, cwd, env, digestFile(prog.path));
  return seal(o, journal, run, unit);
}

/** unitOf returns the descriptor the attestation names; refuses, before anything runs, one whose address is not unitId. */
function unitOf(o: RunUnitOptions): unknown {
  const unit = o.unit ?? makeUnit({ argv: [...o.argv], manifest: o.manifest, level: o.level });
  if (addressOf(unit) !== o.unitId)
    throw new RangeError(
      "runUnit: unitId is not the address of options.unit (default makeUnit({ argv, manifest, level }))",
    );
  return unit;
}

interface Executed {
  readonly reading: MeterReading;
  readonly outcome: Outcome;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
}

function notStarted(reason: string): Executed {
  const now = Date.now();
  const reading: MeterReading = { start_ms: now, end_ms: now, components: [], absent: [] };
  return {
    reading,
    outcome: { status: "spawn_failed", reason },
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
  };
}

async function execute(
  o: RunUnitOptions,
  journal: Journal,
  cwd: string,
  env: NodeJS.ProcessEnv,
  binary: Digest,
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
  journal.append({ type: "process.start", pid, argv: [...o.argv], binary });
  const streams = record(o, journal, m.child);
  const timer = o.timeoutMs === undefined ? null : setTimeout(() => killGroup(pid), o.timeoutMs);
  const onAbort = () => {
    killGroup(pid);
  };
  o.abort?.addEventListener("abort", onAbort);
  if (o.abort?.aborted) onAbort();
  let exit: MeteredExit;
  try {
    exit = await m.done;
  } finally {
    if (timer) clearTimeout(timer);
    o.abort?.removeEventListener("abort", onAbort);
  }
  const stdout = streams.stdout.finish();
  const stderr = streams.stderr.finish();
  if (o.watch !== undefined && before !== null) journalWrites(journal, o.watch, before);
  journal.append({ type: "process.exit", pid, code: exit.code, signal: exit.signal });
  return { reading: exit.reading, outcome: outcomeOf(exit), stdout, stderr };
}

function record(o: RunUnitOptions, journal: Journal, child: ReturnType<typeof meterCommand>["child"]) {
  if (o.stdin && child.stdin) {
    const input = new StreamRecorder(journal, "stdin", o.chunkBytes);
    input.push(Buffer.from(o.stdin));
    input.finish();
    child.stdin.on("error", () => undefined); // a child that exits without reading its input
    child.stdin.end(Buffer.from(o.stdin));
  }
  const out = {
    stdout: new StreamRecorder(journal, "stdout", o.chunkBytes),
    stderr: new StreamRecorder(journal, "stderr", o.chunkBytes),
  };
  for (const s of ["stdout", "stderr"] as const)
    child[s]?.on("data", (d: Buffer) => {
      out[s].push(d);
      o.onOutput?.(s, d);
    });
  return out;
}

/** killGroup kills the child's whole process group (it was spawned detached, as its leader), so a
 * grandchild holding the output pipes cannot keep the run open past its timeout. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function outcomeOf(exit: MeteredExit): Outcome {
  if (exit.signal !== null) return { status: "signaled", signal: exit.signal };
  return { status: "exited", exit_code: exit.code ?? 0 };
}

function seal(o: RunUnitOptions, journal: Journal, run: Executed, unit: unknown): RunUnitResult {
  const chain = o.energyChain ?? startEnergyChain(o.unitId, o.grantsId);
  const receipt = makeReceipt(chain, run.reading, o.hostKey);
  const receiptAddress = envelopeAddress(receipt.envelope);
  const head = journal.head();
  const interval = { start_ms: run.reading.start_ms, end_ms: run.reading.end_ms };
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
    level: o.level,
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
    stdout: run.stdout,
    stderr: run.stderr,
    absent: run.reading.absent,
  };
}
