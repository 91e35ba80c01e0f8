// The supervisor of a durable run on this host: the process that holds the run's live sandbox
// (the foreground `sbx run`/`sbx resume`, or its detached child) and answers `sbx suspend`,
// `sbx resume` and `sbx close` over the control socket. Its operations run one at a time; each
// appends to the record by compare-and-append on the head it holds, so a record moved by anyone
// else is refused (StaleHead), never overwritten. It ends when the processes exit by themselves
// (the run stays active), when the run is released or closed; a frozen run keeps it alive.
import { unlinkSync } from "node:fs";
import type { Digest, KeyPair } from "@sbx/wire";
import type { EnergyChainState } from "@sbx/sandbox-attest/energy";
import type { Outcome } from "@sbx/sandbox-attest/attestation";
import type { CloseOutcome, SnapshotRef } from "@sbx/sandbox-attest/runrecord";
import { resumeRun } from "@sbx/sandbox-attest/store";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import type { Level } from "@sbx/sandbox-attest/unit";
import type { ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import type { LiveCheck } from "../run/index.ts";
import { HostError } from "../errors.ts";
import { faultPoint } from "../store/index.ts";
import type { SandboxOptions } from "../sandbox/index.ts";
import { snapshotRun, type RunStore } from "../stores/index.ts";
import { checkEnvironment, hostOffer } from "./environment.ts";
import { idleEnergy } from "./idle.ts";
import { keepJournal } from "./journal.ts";
import { LiveSandbox, type SealedInterval } from "./session.ts";
import {
  dropOpenInterval,
  lastReading,
  openInterval,
  writeOpenInterval,
  type OpenInterval,
} from "./orphan.ts";
import { readVerifiedRun } from "./record.ts";
import { residentBytes } from "./freezer.ts";
import type { RunLock } from "./lock.ts";
import { serveControl, Unanswerable, type ControlRequest, type ControlServer } from "./control.ts";
import type { RunPaths } from "./paths.ts";

/** What a supervisor starts from: the run, its head, the sandbox to start, the lock it now owns. */
export interface SupervisorInit {
  readonly store: RunStore;
  readonly id: Digest;
  readonly head: Digest;
  readonly argv: readonly string[];
  readonly unit: unknown;
  readonly unitId: Digest;
  readonly grantsId: Digest;
  readonly manifest: Digest;
  /** The image `manifest` pins (sha256 hex; null: none): image.ts pinnedImageOf. */
  readonly pinnedImage: string | null;
  readonly policy: Digest;
  readonly hostKey: KeyPair;
  readonly sandbox: SandboxOptions;
  readonly chain: EnergyChainState;
  readonly paths: RunPaths;
  readonly lock: RunLock;
  readonly maxLevel?: Level;
  readonly onOutput?: (stream: "stdout" | "stderr", data: Buffer) => void;
  /** Told each thing the supervisor did, as one line. */
  readonly say: (line: string) => void;
  /** The exec policy every interval is gated by (§5.5.5; its address is `policy`). */
  readonly execPolicy?: ExecPolicy;
  /** The hooks of a run under grants (jcp §4.3–§4.7): ./granted.ts. */
  readonly governance?: Governance;
}

/** What a run under grants adds to its supervisor: a live check, and a word at each step. */
export interface Governance {
  readonly live?: LiveCheck;
  /** After an executed segment is appended: debit it (citing its attestation). */
  recorded(sealed: SealedInterval, head: Digest): Promise<void>;
  /** Before a resumed segment is appended: refuse (throw) a run whose grant no longer allows it. */
  mayResume(): Promise<void>;
  /** After the resumed segment is appended: debit the idle energy (citing the segment). */
  resumed(head: Digest, idle_uj: bigint): Promise<void>;
  /** After the suspended segment is appended: record the agent's checkpoint (jcp §4.7). */
  suspended(head: Digest, fsRoot: Digest): Promise<void>;
}

interface Parked {
  readonly ref: SnapshotRef;
  readonly atMs: number;
  readonly resident: bigint;
  readonly bytes: bigint;
}

/** How a supervisor ended: the last interval's outcome (null when none ended by itself). */
export interface SupervisorEnd {
  readonly sealed: SealedInterval | null;
  readonly reason: "exited" | "released" | "closed";
}

/** Supervisor: see the file comment. */
export class Supervisor {
  readonly #i: SupervisorInit;
  readonly #live: LiveSandbox;
  #head: Digest;
  #parked: Parked | null = null;
  #released = false;
  #lastSealed: SealedInterval | null = null;
  #finishing = false;
  #queue: Promise<unknown> = Promise.resolve();
  #server: ControlServer | null = null;
  // §13.7.4 The open interval's file (for a later command, should this process die) and its timer.
  #interval: OpenInterval | null = null;
  #tick: NodeJS.Timeout | null = null;
  #end: (e: SupervisorEnd) => void = () => undefined;
  /** Resolves once the supervisor has ended and let go of the socket and the lock. */
  readonly ended: Promise<SupervisorEnd>;

  private constructor(i: SupervisorInit, live: LiveSandbox) {
    this.#i = i;
    this.#live = live;
    this.#head = i.head;
    this.ended = new Promise((r) => (this.#end = r));
  }

  /** Supervisor.start starts the sandbox and the control channel; refusals come before either stays. */
  static async start(i: SupervisorInit): Promise<Supervisor> {
    // A Ctrl-C (or TERM) while the sandbox starts is held, not fatal: once the park handler is in
    // place below, each one held is handled as if it came then (the first parks the run).
    let held = 0;
    const hold = () => {
      held++;
    };
    process.on("SIGINT", hold).on("SIGTERM", hold);
    try {
      return await Supervisor.#start(i, () => held);
    } finally {
      process.off("SIGINT", hold).off("SIGTERM", hold);
    }
  }

  static async #start(i: SupervisorInit, held: () => number): Promise<Supervisor> {
    let live: LiveSandbox;
    try {
      live = await LiveSandbox.start({
        argv: i.argv,
        unit: i.unit,
        unitId: i.unitId,
        grantsId: i.grantsId,
        manifest: i.manifest,
        pinnedImage: i.pinnedImage,
        policy: i.policy,
        hostKey: i.hostKey,
        // §13.7.4 The sandbox outlives this process: a dead supervisor leaves its interval to recover.
        // §13.10a item 8 The open interval is on disk before anything of the unit runs.
        sandbox: {
          ...i.sandbox,
          outlivesSupervisor: true,
          onCgroup: (dirs, meter) => writeOpenInterval(i.paths.interval, openInterval(i.head, dirs, meter)),
        },
        energyChain: i.chain,
        ...(i.maxLevel !== undefined ? { maxLevel: i.maxLevel } : {}),
        ...(i.onOutput !== undefined ? { onOutput: i.onOutput } : {}),
        ...(i.execPolicy !== undefined ? { execPolicy: i.execPolicy } : {}),
        ...(i.governance?.live !== undefined ? { live: i.governance.live } : {}),
      });
    } catch (e) {
      dropOpenInterval(i.paths.interval); // nothing of the unit runs now
      throw e;
    }
    const s = new Supervisor(i, live);
    try {
      s.#opened();
      s.#server = await serveControl(i.paths.socket, (req) => s.#serial(() => s.#handle(req)));
    } catch (e) {
      s.#sealed();
      await live.release();
      dropOpenInterval(i.paths.interval);
      throw e;
    }
    void live.done.then(() =>
      s
        .#serial(() => s.#exited())
        .catch(async (e: unknown) => {
          // Recording the last interval failed (the record moved, the store broke): say so and
          // let go; the run stays as the record says, and can be suspended or closed.
          i.say(`could not record the last interval: ${e instanceof Error ? e.message : String(e)}`);
          await s.#finish("exited");
        }),
    );
    // Ctrl-C or a TERM parks the run (suspended, released) rather than losing the interval. While
    // it parks, a second is ignored (and said); a third within 2 s of the one before kills the
    // run's processes, whose interval is still sealed and recorded by the parking under way.
    let signals = 0;
    let lastAt = 0;
    const park = () => {
      signals++;
      const now = Date.now();
      const soon = now - lastAt <= 2000;
      lastAt = now;
      if (signals === 1) {
        i.say("parking the run (suspended, released); a second Ctrl-C is ignored");
        void s
          .#serial(() => s.suspend(true))
          .catch((e: unknown) => {
            i.say(`could not park the run: ${e instanceof Error ? e.message : String(e)}`);
          });
      } else if (signals >= 3 && soon) {
        i.say("killing the run's processes: the interval is still attested and recorded");
        void s.#live.kill().catch(() => undefined);
      } else {
        signals = 2;
        i.say("still parking the run: this Ctrl-C is ignored; a third within 2 s kills its processes");
      }
    };
    process.on("SIGINT", park).on("SIGTERM", park);
    void s.ended.then(() => process.off("SIGINT", park).off("SIGTERM", park));
    for (let k = held(); k > 0; k--) park();
    return s;
  }

  get head(): Digest {
    return this.#head;
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.#queue.then(fn);
    this.#queue = p.catch(() => undefined);
    return p;
  }

  async #handle(req: ControlRequest): Promise<unknown> {
    // Its turn came after this supervisor began to end (a request queued behind the last
    // interval's recording, or behind a release): not answered here, so its asker asks again or
    // acts on the record itself, under the run's lock this supervisor no longer holds.
    if (this.#finishing) throw new Unanswerable("the supervisor is ending");
    switch (req.op) {
      case "suspend":
        return this.suspend(req.release);
      case "resume":
        return this.resume();
      case "close":
        return this.close(req.outcome);
      case "status":
        return { head: this.#head, parked: this.#parked !== null, frozen: this.#live.frozen };
    }
  }

  // §13.7.4 An interval opened on this.#head: said in its file (written whole), its last reading
  // kept every second, so a later command can recover it should this process die.
  #opened(): void {
    this.#interval = openInterval(this.#head, this.#live.cgroupDirs, this.#live.meterCgroup);
    writeOpenInterval(this.#i.paths.interval, this.#interval);
    faultPoint("durable:interval-opened");
    this.#tick ??= setInterval(() => {
      if (this.#interval === null) return;
      this.#interval = lastReading(this.#interval);
      try {
        writeOpenInterval(this.#i.paths.interval, this.#interval);
      } catch {
        // the next tick tries again; the file's earlier reading stands
      }
    }, 1000);
    this.#tick.unref();
  }

  // The interval was recorded: its reading is no longer kept. The file stays until the sandbox is
  // freed (#finish): a later command that finds it after this process died ends what is left in
  // the cgroup, and attests the interval only while the record's head is still the one it names.
  #sealed(): void {
    this.#interval = null;
    if (this.#tick !== null) clearInterval(this.#tick);
    this.#tick = null;
  }

  async #record(sealed: SealedInterval): Promise<void> {
    const s = this.#i.store;
    await keepJournal(s, sealed.journal); // §13.7.3: found from the tree head the attestation signs
    await s.putSigned(sealed.receipt.envelope);
    faultPoint("durable:receipt-stored");
    await s.putSigned(sealed.attestation);
    faultPoint("durable:attestation-stored");
    this.#head = await s.appendSegment(this.#i.id, this.#head, {
      kind: "executed",
      attestation: sealed.address,
    });
    this.#sealed();
    faultPoint("durable:segment-appended"); // before its debit (lifecycle/granted.ts reconciles)
    this.#lastSealed = sealed;
    this.#i.say(`executed ${sealed.address} (${sealed.receipt.receipt.total_uj} µJ, ${outcomeText(sealed)})`);
    await this.#i.governance?.recorded(sealed, this.#head);
  }

  // The processes ended by themselves: seal and record their last interval, unless it was sealed.
  async #exited(): Promise<void> {
    const sealed = await this.#live.finish(() => this.#head);
    if (sealed !== null) await this.#record(sealed);
    if (this.#parked === null && !this.#released) await this.#finish("exited");
  }

  // The sandbox gone and its workspace written back (sandbox-attest §5.3) before the caller is told.
  async #freed(): Promise<void> {
    await this.#live.release().catch((e: unknown) => {
      this.#i.say(`could not free the sandbox: ${e instanceof Error ? e.message : String(e)}`);
    });
  }

  async #finish(reason: SupervisorEnd["reason"]): Promise<void> {
    if (this.#finishing) return;
    this.#finishing = true;
    this.#sealed();
    await this.#live.release().then(
      () => dropOpenInterval(this.#i.paths.interval),
      (e: unknown) => {
        this.#i.say(`could not free the sandbox: ${e instanceof Error ? e.message : String(e)}`);
      },
    );
    this.#server?.close();
    try {
      unlinkSync(this.#i.paths.socket);
    } catch {
      // gone already
    }
    this.#i.lock.release();
    this.#end({ sealed: this.#lastSealed, reason });
  }

  /**
   * suspend (§13) freezes the sandbox and records the interval, snapshots the workspace into the
   * store and appends the suspended segment; with `release` then ends the processes.
   */
  async suspend(release: boolean): Promise<unknown> {
    if (this.#parked !== null) throw new HostError("RunNotLive", "the run is parked already");
    let sealed: SealedInterval | null = null;
    if (!this.#live.frozen)
      try {
        sealed = await this.#live.suspend(this.#head);
      } catch (e) {
        if (!(e instanceof HostError && e.code === "RunNotLive")) throw e;
      }
    if (sealed !== null) await this.#record(sealed);
    const snap = await snapshotRun(this.#i.store, this.#i.sandbox.workspace);
    faultPoint("durable:snapshot-stored");
    const ref: SnapshotRef = { fs_root: snap.fs_root, manifest: this.#i.manifest };
    const atMs = Math.max(Date.now(), sealed?.receipt.receipt.end_ms ?? 0);
    const resident = release ? 0n : (residentBytes(this.#live.cgroupDirs) ?? 0n);
    this.#head = await this.#i.store.appendSegment(this.#i.id, this.#head, {
      kind: "suspended",
      snapshot: ref,
      at_ms: atMs,
    });
    this.#parked = { ref, atMs, resident, bytes: BigInt(snap.bytes) };
    await this.#i.governance?.suspended(this.#head, snap.fs_root);
    this.#i.say(
      `suspended: snapshot ${snap.fs_root} (${snap.files} files, ${snap.bytes} bytes)${release ? ", released" : ", processes frozen"}`,
    );
    if (release) {
      this.#released = true;
      await this.#freed();
      void this.#finish("released");
    }
    return {
      head: this.#head,
      fs_root: snap.fs_root,
      files: snap.files,
      bytes: snap.bytes,
      released: release,
    };
  }

  /**
   * resume (§13.4) of the frozen sandbox: the record verified from genesis, the workspace
   * re-snapshotted and offered (SnapshotMismatch when it changed while parked), the manifest
   * checked against this host, the idle energy of the frozen memory and the snapshot estimated; the
   * resumed segment appended; then the processes thawed.
   */
  async resume(): Promise<unknown> {
    const p = this.#parked;
    if (p === null || this.#released) throw new SandboxAttestError("PhaseViolation", "the run is not parked");
    await readVerifiedRun(this.#i.store, this.#i.id);
    await this.#i.governance?.mayResume();
    const now = await snapshotRun(this.#i.store, this.#i.sandbox.workspace);
    const offered: SnapshotRef = { fs_root: now.fs_root, manifest: p.ref.manifest };
    const sat = await checkEnvironment(this.#i.store, p.ref.manifest, hostOffer(this.#i.store.root));
    const resident = residentBytes(this.#live.cgroupDirs) ?? p.resident;
    const atMs = Math.max(Date.now(), p.atMs);
    const idle = idleEnergy({
      parkedMs: atMs - p.atMs,
      residentBytes: (resident + p.resident) / 2n,
      snapshotBytes: p.bytes,
    });
    this.#head = await resumeRun(this.#i.store, this.#i.id, {
      offered,
      env: { satisfies: () => sat.ok },
      idle,
      atMs,
    });
    faultPoint("durable:resumed-appended");
    this.#parked = null;
    await this.#i.governance?.resumed(this.#head, BigInt(idle.uj));
    this.#opened(); // before the thaw: a death in between recovers a frozen, near-empty interval
    await this.#live.thaw();
    this.#i.say(
      `resumed: thawed after ${atMs - p.atMs} ms parked; idle ${idle.uj} µJ estimated (${idle.source})`,
    );
    return { head: this.#head, idle, thawed: true };
  }

  /** close (§13.2) ends the run: an active interval is recorded first, then the processes end. */
  async close(outcome: string | null): Promise<unknown> {
    if (!this.#live.frozen && this.#parked === null) {
      await this.#live.kill();
      const sealed = await this.#live.finish(() => this.#head);
      if (sealed !== null) await this.#record(sealed);
    }
    const o = closeOutcome(outcome, this.#parked !== null, this.#lastSealed?.outcome ?? null);
    this.#head = await this.#i.store.appendSegment(this.#i.id, this.#head, {
      kind: "closed",
      at_ms: Date.now(),
      outcome: o,
    });
    this.#released = true;
    this.#i.say(`closed (${o})`);
    await this.#freed();
    void this.#finish("closed");
    return { head: this.#head, outcome: o };
  }
}

/** closeOutcome: the outcome asked for, else abandoned when parked, completed after exit 0, else failed. */
export function closeOutcome(asked: string | null, parked: boolean, last: Outcome | null): CloseOutcome {
  if (asked === "completed" || asked === "failed" || asked === "abandoned") return asked;
  if (parked) return "abandoned";
  return last?.status === "exited" && last.exit_code === 0 ? "completed" : "failed";
}

function outcomeText(s: SealedInterval): string {
  const o = s.outcome;
  if (o.status === "exited") return `exited ${String(o.exit_code)}`;
  if (o.status === "signaled") return o.signal === "SIGSTOP" ? "frozen" : `killed by ${o.signal}`;
  return `did not start (${o.reason})`;
}
