// §13 A live sandbox of a durable run: one S1 sandbox (§5) whose processes live across several
// active intervals. Each interval is metered (§6), journaled (§8) and attested (§7) on its own and
// ends either when the processes exit or when the run is suspended: then the sandbox is frozen
// first, so nothing runs unmetered, and the interval is sealed while the processes stay resident.
// A thaw starts the next interval in the same sandbox; a release kills what is frozen.
import type { Digest, Envelope, KeyPair } from "@sbx/wire";
import type { Outcome } from "@sbx/sandbox-attest/attestation";
import type { EnergyChainState, MadeReceipt } from "@sbx/sandbox-attest/energy";
import { Journal } from "@sbx/sandbox-attest/journal";
import type { ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import type { Level } from "@sbx/sandbox-attest/unit";
import { startMeter, type Meter } from "../meter/index.ts";
import { HostError } from "../errors.ts";
import {
  handOver,
  startSandbox,
  type Sandbox,
  type SandboxExit,
  type SandboxOptions,
} from "../sandbox/sandbox.ts";
import { checkBuiltFrom } from "../run/built.ts";
import { digestFile, programInSandbox } from "../run/program.ts";
import { StreamRecorder } from "../run/stdio.ts";
import { journalWrites, scanFiles } from "../run/files.ts";
import { freezeProcesses, freezeTarget, removeFreezer, thawProcesses, type FreezeTarget } from "./freezer.ts";
import { attachLiveGate, IntervalJournal, type HeldGate, type LiveGateOptions } from "./gated.ts";
import { watchInterval, type IntervalWatch } from "./livecheck.ts";
import { withOvershoot, type LiveCheck } from "../run/run.ts";
import { sealInterval } from "./seal.ts";

/** What a live sandbox needs: the unit, its ids and addresses, the host key, the energy chain so far. */
export interface LiveOptions {
  readonly argv: readonly string[];
  readonly unit: unknown;
  readonly unitId: Digest;
  readonly grantsId: Digest;
  readonly manifest: Digest;
  /** The image `manifest` pins (sha256 hex; null: none): every interval is checked against it (run/built.ts). */
  readonly pinnedImage: string | null;
  readonly policy: Digest;
  readonly hostKey: KeyPair;
  readonly sandbox: SandboxOptions;
  readonly energyChain: EnergyChainState;
  readonly maxLevel?: Level;
  readonly onOutput?: (stream: "stdout" | "stderr", data: Buffer) => void;
  /** The exec policy (address `policy`) every interval is gated by (§5.5.5): ./gated.ts. */
  readonly execPolicy?: ExecPolicy;
  readonly gateOptions?: LiveGateOptions["gateOptions"];
  /** A live check of each interval (a grant's budget, jcp §4.3): ./livecheck.ts. */
  readonly live?: LiveCheck;
}

/** One sealed interval: the signed attestation and receipt, ready to be stored and cited. */
export interface SealedInterval {
  readonly attestation: Envelope;
  readonly address: Digest;
  readonly receipt: MadeReceipt;
  readonly receiptAddress: Digest;
  readonly outcome: Outcome;
  readonly level: Level;
  /** The interval's journal (§8), whose tree head the attestation binds; kept by keepJournal. */
  readonly journal: Journal["events"];
}

interface Open {
  readonly journal: Journal;
  readonly meter: Meter;
  readonly before: Map<string, string>;
  readonly out: { stdout: StreamRecorder; stderr: StreamRecorder };
}

/**
 * LiveSandbox: start() a sandbox and its first interval; suspend() freezes and seals; thaw() opens
 * the next interval; exited resolves with the sealed last interval once the processes end by
 * themselves (null when the run was suspended and released instead); release() kills it all.
 */
export class LiveSandbox {
  readonly #o: LiveOptions;
  readonly #sb: Sandbox;
  readonly #pid: number;
  readonly #freeze: FreezeTarget;
  #chain: EnergyChainState;
  #open: Open | null = null;
  #frozen = false;
  #released = false;
  #gate: HeldGate | null = null;
  #gateJournal: IntervalJournal | null = null;
  #watch: IntervalWatch | null = null;
  /** The sandbox's end, as startSandbox reports it. */
  readonly done: Promise<SandboxExit>;

  private constructor(o: LiveOptions, sb: Sandbox, pid: number) {
    this.#o = o;
    this.#sb = sb;
    this.#pid = pid;
    this.#chain = o.energyChain;
    this.#freeze = freezeTarget(sb.cgroup.v2, sb.cgroup.dirs);
    this.done = sb.done;
    for (const s of ["stdout", "stderr"] as const)
      sb.child[s]?.on("data", (d: Buffer) => {
        this.#open?.out[s].push(d);
        o.onOutput?.(s, d);
      });
  }

  /**
   * LiveSandbox.start starts `argv` in a new sandbox (§5) and opens its first interval. Refuses what
   * startSandbox refuses, a program not found in the sandbox (`ProgramNotFound`), and a host that can
   * freeze no cgroup (`FreezeFailed`), before anything is recorded.
   */
  static async start(o: LiveOptions): Promise<LiveSandbox> {
    const prog = { path: programInSandbox(o.argv[0] ?? "", o.sandbox) };
    handOver(o.sandbox); // before the stamps: the hand-over is not journaled as the unit's writes
    const before = scanFiles(o.sandbox.workspace);
    const gated = o.execPolicy !== undefined;
    const sb = startSandbox(o.argv, gated ? { ...o.sandbox, gated } : o.sandbox, "ignore");
    const pid = await sb.unitPid;
    if (pid === null) {
      if (gated) sb.proceed(false);
      await sb.done;
      await sb.release();
      throw new HostError("SandboxFailed", "bwrap reported no process");
    }
    let live: LiveSandbox | null = null;
    try {
      live = new LiveSandbox(o, sb, pid);
      const journal = new Journal();
      journal.append({ type: "process.start", pid, argv: [...o.argv], binary: digestFile(prog.path) });
      live.#begin(journal, before);
      if (o.execPolicy !== undefined) {
        const self = live;
        self.#gateJournal = new IntervalJournal(() => self.#openJournal());
        live.#gate = await attachLiveGate(sb, {
          policy: o.execPolicy,
          pid,
          journal: self.#gateJournal,
          ...(o.gateOptions !== undefined ? { gateOptions: o.gateOptions } : {}),
        });
      }
    } catch (e) {
      if (live !== null) live.#abandon();
      sb.signal("SIGKILL");
      await sb.done;
      await sb.release();
      throw e;
    }
    return live;
  }

  /** The unit's first process as the host numbers it. */
  get pid(): number {
    return this.#pid;
  }
  /** The run's cgroup directories (what residency is read from). */
  get cgroupDirs(): readonly string[] {
    return this.#sb.cgroup.dirs;
  }
  /** The cgroup directory the meter reads (its CPU counter). */
  get meterCgroup(): string {
    return this.#sb.meterCgroup;
  }
  /** The energy chain after the last sealed interval. */
  get energyChain(): EnergyChainState {
    return this.#chain;
  }
  get frozen(): boolean {
    return this.#frozen;
  }

  #openJournal(): Journal | null {
    return this.#open?.journal ?? null;
  }

  // A start that failed after its first interval opened: the watch and the meter end unsealed.
  #abandon(): void {
    this.#watch?.stop();
    this.#open?.meter.stop();
    this.#open = null;
  }

  #begin(journal: Journal, before: Map<string, string>): void {
    this.#gateJournal?.flushInto(journal);
    const meter = startMeter({ cgroup: this.#sb.meterCgroup });
    const out = {
      stdout: new StreamRecorder(journal, "stdout"),
      stderr: new StreamRecorder(journal, "stderr"),
    };
    this.#open = { journal, meter, before, out };
    this.#watch =
      this.#o.live === undefined
        ? null
        : watchInterval(
            this.#o.live,
            () => meter.peek(),
            (s) => {
              this.#sb.signal(s);
            },
          );
  }

  /** suspend (§13) freezes every process of the sandbox, then seals the interval citing `head`. */
  async suspend(head: Digest): Promise<SealedInterval> {
    if (this.#open === null || this.#frozen)
      throw new HostError("RunNotLive", "no active interval to suspend");
    await freezeProcesses(this.#freeze, this.#sb.cgroup.dirs);
    this.#frozen = true;
    return this.#seal(head, { status: "signaled", signal: "SIGSTOP" }, null, this.#gate?.alive() === true);
  }

  /** thaw (§13) lets the frozen processes run again and opens the next interval. */
  async thaw(): Promise<void> {
    if (!this.#frozen || this.#released) throw new HostError("RunNotLive", "the sandbox is not frozen");
    const before = scanFiles(this.#o.sandbox.workspace);
    // The interval opens first, so a decision of the gate right after the thaw has a journal.
    this.#begin(new Journal(), before);
    try {
      await thawProcesses(this.#freeze);
    } catch (e) {
      this.#open?.meter.stop();
      this.#watch?.stop();
      this.#open = null;
      throw e;
    }
    this.#frozen = false;
  }

  /**
   * finish waits for the processes to end by themselves and seals the last interval citing the head
   * `headNow()` gives then; null when the interval was already sealed (suspended) or released.
   */
  async finish(headNow: () => Digest): Promise<SealedInterval | null> {
    const exit = await this.#sb.done;
    if (this.#open === null) return null;
    const held = this.#gate === null ? false : await this.#gate.ended;
    const code = exit.code;
    // 128+15 is read as SIGTERM only where the host sent one (a live check stopped the unit).
    const stopped = this.#watch?.stoppedFor() ?? null;
    const ended: Outcome =
      code === null
        ? { status: "signaled", signal: exit.signal ?? "SIGKILL" }
        : code === 128 + 9 || (code === 128 + 15 && stopped !== null)
          ? { status: "signaled", signal: code === 128 + 9 ? "SIGKILL" : "SIGTERM" }
          : { status: "exited", exit_code: code };
    const outcome: Outcome = stopped !== null ? { ...ended, stopped } : ended;
    return this.#seal(headNow(), outcome, outcome.status === "exited" ? exit.code : null, held);
  }

  #seal(head: Digest, ended: Outcome, code: number | null, gateHeld = false): SealedInterval {
    const open = this.#open;
    if (open === null) throw new HostError("RunNotLive", "no open interval");
    this.#open = null;
    this.#watch?.stop();
    const reading = open.meter.stop();
    const outcome = withOvershoot(ended, this.#o.live, reading);
    open.out.stdout.finish();
    open.out.stderr.finish();
    journalWrites(open.journal, this.#o.sandbox.workspace, open.before);
    if (outcome.status !== "signaled" || outcome.signal !== "SIGSTOP")
      open.journal.append({
        type: "process.exit",
        pid: this.#pid,
        code: code,
        signal: code === null ? (outcome.status === "signaled" ? outcome.signal : "SIGKILL") : null,
      });
    // The same sealing as a recovered interval's (seal.ts), with the journal, the snapshots of a
    // durable run and, when the gate held, process control provided.
    const sealed = sealInterval({
      chain: this.#chain,
      reading,
      hostKey: this.#o.hostKey,
      unit: this.#o.unit,
      unitId: this.#o.unitId,
      grantsId: this.#o.grantsId,
      manifest: this.#o.manifest,
      execPolicy: this.#o.policy,
      journal: open.journal,
      outcome,
      provided: { journaled: true, snapshots: true, processControl: gateHeld },
      maxLevel: this.#o.maxLevel,
      runHead: head,
      beforeSign: () => {
        checkBuiltFrom(this.#sb.provided, this.#o.pinnedImage);
      },
    });
    this.#chain = sealed.receipt.state;
    return {
      attestation: sealed.attestation,
      address: sealed.address,
      receipt: sealed.receipt,
      receiptAddress: sealed.receiptAddress,
      outcome,
      level: sealed.level,
      journal: open.journal.events,
    };
  }

  /** kill ends every process of the sandbox (frozen or not) and waits for the end; the cgroup stays for the last reading. */
  async kill(): Promise<void> {
    this.#sb.signal("SIGKILL");
    if (this.#frozen) await thawProcesses(this.#freeze).catch(() => undefined);
    await this.#sb.done;
  }

  /** release (§13) ends every process of the sandbox (frozen or not) and removes its cgroups. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    await this.kill();
    this.#gate?.stop();
    removeFreezer(this.#freeze);
    await this.#sb.release();
  }
}
