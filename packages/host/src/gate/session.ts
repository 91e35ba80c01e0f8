// §5.5.5 One gated sandbox: spawns the helper, answers its misses by hashing, keeps the journal of
// decisions, and reports how the sandbox ended.
import { spawn, type ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { Digest } from "@sbx/wire";
import {
  decide,
  execDecisionEvent,
  policyAddress,
  type ExecDecision,
  type ExecPolicy,
  type ExecRule,
} from "@sbx/sandbox-attest/execpolicy";
import { Journal } from "@sbx/sandbox-attest/journal";
import { HostError } from "../errors.ts";
import { hashFile, type StatKey } from "./hash.ts";
import { assertGateAvailable, HELPER_PATH } from "./helper.ts";
import { LoaderSet } from "./loaders.ts";
import { onLines, parseHelperLine, verdictLine, type GateStats, type HelperMessage } from "./protocol.ts";

/** What to run under the gate. */
export interface GateOptions {
  readonly policy: ExecPolicy;
  /** What the helper starts in its own sandbox; empty with `attach`. */
  readonly command: readonly string[];
  /**
   * A process of a sandbox built elsewhere (bubblewrap, say) whose mounts are final: the helper
   * joins its mount namespace and marks every mount there instead of starting `command` (§5.5.5).
   * `workspace`, `readOnly` and `cwd` are then the builder's; the run ends when that process exits.
   */
  readonly attach?: number;
  /** A directory made a dedicated mount in the sandbox (and the default working directory). */
  readonly workspace?: string;
  /**
   * Directories made read-only in the sandbox (a read-only bind of each onto itself). Only files on
   * a read-only mount may be cached, by the helper or by the kernel (§5.5.5); on a writable mount
   * every exec is decided by content.
   */
  readonly readOnly?: readonly string[];
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** How long the kernel may wait for an answer to a miss before it is DENY (default 5000 ms). */
  readonly timeoutMs?: number;
  /** Heartbeat silence after which the warden kills the sandbox (default 2000 ms). */
  readonly stallMs?: number;
  /** false: every decision is a miss (the cold-cache measurement). */
  readonly cache?: boolean;
  /** false: the same namespaces without fanotify marks (the no-gate baseline). */
  readonly enforce?: boolean;
  readonly stdio?: "pipe" | "inherit";
  readonly loaders?: LoaderSet;
  /** The §8 journal every decision is appended to (exec.decision events); a new one by default. */
  readonly journal?: Journal;
  /** Test hook: never answer misses, so the helper's timeout must deny. */
  readonly withholdAnswers?: boolean;
  /** Test hook: another build of the helper (the sanitizer build, `ASAN_HELPER_PATH`). */
  readonly helper?: string;
}

/** How a gated run ended. */
export interface GateResult {
  /** The command's exit code, or null when it was killed. */
  readonly code: number | null;
  readonly signal: number;
  /** The helper's own exit code (0 after a normal end), or null when it was killed. */
  readonly helperCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly decisions: readonly ExecDecision[];
  /** The journal holding one exec.decision event per decision, in order (§5.5.6, §8). */
  readonly journal: Journal;
  readonly stats: GateStats | null;
}

/** A running gated sandbox. */
export interface GateSession {
  readonly helperPid: number;
  /** The sandbox's pid 1, as the host numbers it. */
  readonly sandboxPid: number;
  /** How many mounts of the sandbox's namespace carry the fanotify mark. */
  readonly marked: number;
  readonly decisions: readonly ExecDecision[];
  readonly journal: Journal;
  readonly done: Promise<GateResult>;
  /** Kills the sandbox (the helper then reports the exit). */
  stop(): void;
  /** Empties the helper's cache. */
  flush(): void;
}

interface Known {
  readonly digest: Digest | null;
  readonly rule: ExecRule | "changed";
}

function helperArgs(o: GateOptions): string[] {
  const a = [
    "--node-pid",
    String(process.pid),
    "--timeout-ms",
    String(o.timeoutMs ?? 5000),
    "--stall-ms",
    String(o.stallMs ?? 2000),
  ];
  if (o.workspace !== undefined) a.push("--workspace", o.workspace);
  for (const d of o.readOnly ?? []) a.push("--read-only", d);
  const cwd = o.cwd ?? o.workspace;
  if (cwd !== undefined) a.push("--cwd", cwd);
  if (o.cache === false) a.push("--no-cache");
  if (o.enforce === false) a.push("--no-gate");
  if (o.attach !== undefined) a.push("--attach", String(o.attach));
  return [...a, "--", ...o.command];
}

class Session {
  readonly decisions: ExecDecision[] = [];
  /** What each answered miss found, by its id: the verdict ids decision lines cite. */
  readonly known = new Map<number, Known>();
  stats: GateStats | null = null;
  exit: { code: number | null; signal: number } | null = null;
  /** Why a decision could not be journaled; the sandbox is then stopped (fail closed). */
  failure: string | null = null;

  readonly journal: Journal;
  readonly policy: Digest;

  constructor(
    readonly o: GateOptions,
    readonly ctl: Writable,
    readonly loaders: LoaderSet,
  ) {
    this.journal = o.journal ?? new Journal();
    this.policy = policyAddress(o.policy);
  }

  async answer(id: number, path: string, key: StatKey): Promise<void> {
    let allowed = false;
    let line: string;
    try {
      const h = await hashFile(path, key);
      if (h.interp !== null) await this.loaders.learn(h.interp);
      const v = decide(this.o.policy, h.digest);
      allowed = v.allowed && h.sameFile;
      this.known.set(id, { digest: h.digest, rule: h.sameFile ? v.rule : "changed" });
      line = verdictLine(id, allowed, h.elf, this.loaders.has(h.digest) || h.loaderShape);
    } catch {
      // The file is gone or unreadable (its process ended): nothing may run from it.
      line = verdictLine(id, false, true, false);
    }
    if (!this.ctl.destroyed) this.ctl.write(line);
  }

  record(m: Extract<HelperMessage, { kind: "decision" }>): void {
    const k = this.known.get(m.verdict);
    const rule = m.source === "timeout" || k === undefined ? "timeout" : k.rule;
    const digest = k?.digest ?? null;
    const d: ExecDecision = {
      digest,
      path: m.path,
      route: m.route,
      rule,
      allowed: m.allowed,
      source: m.source,
      pid: m.pid,
    };
    // The journaled event is the decision too (it has every member of one): one object kept, not two.
    const e = this.journal.append(execDecisionEvent(d, this.policy));
    if (e.type === "exec.decision") this.decisions.push(e);
  }

  on(m: HelperMessage): void {
    if (m.kind === "miss" && !this.o.withholdAnswers) void this.answer(m.id, m.path, m.key);
    else if (m.kind === "decision") {
      try {
        this.record(m);
      } catch (e) {
        // A decision the journal refuses would go unrecorded: nothing more may run.
        this.failure ??= e instanceof Error ? e.message : String(e);
        if (!this.ctl.destroyed) this.ctl.write("stop\n");
      }
    } else if (m.kind === "exit") {
      this.stats = m.stats;
      this.exit = { code: m.code, signal: m.signal };
    }
  }
}

function collect(child: ChildProcess): { out: () => string; err: () => string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on("data", (b: Buffer) => out.push(b));
  child.stderr?.on("data", (b: Buffer) => err.push(b));
  return { out: () => Buffer.concat(out).toString(), err: () => Buffer.concat(err).toString() };
}

/**
 * startGate runs `command` in a gated sandbox (§5.5.5) and resolves once the helper has marked the
 * sandbox's mounts and started it. Throws `GateUnavailable` where the gate cannot run and
 * `GateFailed` when the helper exits before the sandbox starts.
 */
export async function startGate(o: GateOptions): Promise<GateSession> {
  assertGateAvailable();
  const loaders = o.loaders ?? (await new LoaderSet().loadHost());
  const pipe = o.stdio === "inherit" ? "inherit" : "pipe";
  const child = spawn(o.helper ?? HELPER_PATH, helperArgs(o), {
    stdio: ["ignore", pipe, pipe, "pipe", "pipe"],
    env: o.env ?? process.env,
  });
  const ctl = child.stdio[3] as Writable;
  ctl.on("error", () => undefined);
  const s = new Session(o, ctl, loaders);
  const io = collect(child);
  const closed = new Promise<{ code: number | null }>((resolve) =>
    child.on("close", (code) => resolve({ code })),
  );
  const ready = new Promise<Extract<HelperMessage, { kind: "ready" }>>((resolve, reject) => {
    onLines(child.stdio[4] as Readable, (l) => {
      const m = parseHelperLine(l);
      if (m?.kind === "ready") resolve(m);
      else if (m) s.on(m);
    });
    void closed.then(({ code }) =>
      reject(
        new HostError(
          "GateFailed",
          `helper exited with ${code} before the sandbox started: ${io.err().trim()}`,
        ),
      ),
    );
  });
  const r = await ready;
  const done = closed.then(({ code }) => {
    ctl.destroy();
    if (s.failure !== null)
      throw new HostError("GateFailed", `a decision could not be journaled: ${s.failure}; sandbox stopped`);
    return {
      code: s.exit?.code ?? null,
      signal: s.exit?.signal ?? 0,
      helperCode: code,
      stdout: io.out(),
      stderr: io.err(),
      decisions: s.decisions,
      journal: s.journal,
      stats: s.stats,
    };
  });
  return {
    helperPid: child.pid ?? -1,
    sandboxPid: r.sandboxPid,
    marked: r.marked,
    decisions: s.decisions,
    journal: s.journal,
    done,
    stop: () => ctl.write("stop\n"),
    flush: () => ctl.write("flush\n"),
  };
}

/** runGated runs a command under the gate to its end (§5.5.5); throws as startGate does. */
export async function runGated(o: GateOptions): Promise<GateResult> {
  return (await startGate(o)).done;
}
