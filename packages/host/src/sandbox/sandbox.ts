// §5 Starting a unit in a sandbox and ending it: the run's cgroup with its limits, the generated
// /etc, the seccomp program, the launcher; at the end, every process left in the cgroup killed, the
// limit counters read, and everything the host made removed.
import { spawn, type ChildProcess, type StdioNull, type StdioPipe } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { HostError } from "../errors.ts";
import { type ExtraBind, GATE_GO_FD, GATE_READY_FD, LAUNCH_PATH, STATUS_FD, TOOLS } from "./bwrap.ts";
import {
  cgroupProcs,
  holdRunCgroup,
  killRunCgroup,
  limitHits,
  removeRunCgroup,
  type Hierarchies,
  type LimitHits,
  type RunCgroup,
} from "./cgroup.ts";
import {
  launchArgv,
  makeRunCgroup,
  providedFacts,
  resolveSpec,
  systemContents,
  type Provided,
  type SandboxSpec,
} from "./plan.ts";
import { sharedSystemDir } from "./system.ts";
import { boundWorkspace, type BoundWorkspace } from "./disk.ts";
import { handWorkspace, workspaceBytes } from "./workspace.ts";
import type { ImageSystem } from "../image/system.ts";

export {
  DEFAULT_HOST_UID,
  DEFAULT_TMP_BYTES,
  DEFAULT_WORKSPACE_BYTES,
  SANDBOX_PATH,
  type Provided,
} from "./plan.ts";

/** How to build one sandbox (§5.1–§5.4): the manifest's part (plan.ts SandboxSpec) and the run's. */
export interface SandboxOptions extends SandboxSpec {
  /** The host directory that is the unit's workspace, its only writable tree. */
  readonly workspace: string;
  /** Cgroup hierarchies (default: this host's); tests pass others to see refusals. */
  readonly hierarchies?: Hierarchies;
  /**
   * The command waits, inside the finished sandbox, until the host calls `go` (§5.5.5): the exec
   * gate attaches in between. runUnit sets it when the run has an exec policy.
   */
  readonly gated?: boolean;
  /** §14.9 An image's verified rootfs is the system, in place of the host's /usr (image/system.ts). */
  readonly image?: ImageSystem;
  /**
   * Host paths bound in besides the workspace (a grant's filesystem resources, ../grants/scopes.ts),
   * read-only; the kernel's permission checks for the sandbox's host uid still apply. A writable one
   * is refused (`DiskLimitUnavailable`, §5.3 item 2): it would have no disk bound.
   */
  readonly binds?: readonly ExtraBind[];
  /** The workspace is bound read-only (a grant allows it `read` only). */
  readonly workspaceReadOnly?: boolean;
  /** A prefix run before the command inside (e.g. a granted port's relay, ../grants/netfwd.ts). */
  readonly wrap?: readonly string[];
  /**
   * The host loopback ports `wrap` relays into the sandbox (a grant's /net/127.0.0.1/PORT,
   * ../grants/netfwd.ts): stated as the network provided, never "none" when any is relayed.
   */
  readonly relayedPorts?: readonly number[];
  /**
   * §13.7.4 The sandbox is not tied to the life of the process that starts it (a durable run's
   * supervisor): its processes stay in the run's cgroup when that process dies, for a later command
   * to attest the orphaned interval from the cgroup's counters and end them.
   */
  readonly outlivesSupervisor?: boolean;
  /**
   * Called with the run's cgroup directories and the one the meter reads once they exist, before
   * anything of the unit runs: a durable supervisor records its open interval there (§13.10a item
   * 8), so a death at any later moment leaves the sandbox's processes findable.
   */
  readonly onCgroup?: (dirs: readonly string[], meter: string) => void;
}

/** How a sandbox ended. */
export interface SandboxExit {
  /** bwrap's exit code: the command's, or 128+N when signal N ended it. */
  readonly code: number | null;
  /** The signal that ended the launcher itself (the host killed it), else null. */
  readonly signal: NodeJS.Signals | null;
  /** True when bwrap reported that the command started. */
  readonly started: boolean;
  /**
   * True when the sandbox was never set up: the launcher or bwrap ended on its own without
   * bwrap's monitor reporting the command's exit (a cgroup, mount or namespace step failed).
   */
  readonly setupFailed: boolean;
  /** The limits the unit ran into. */
  readonly hits: LimitHits & { readonly disk: boolean };
}

/** A started sandbox. */
export interface Sandbox {
  readonly child: ChildProcess;
  /** The cgroup directory the meter reads (cgroup2 cpu.stat, or v1 cpuacct). */
  readonly meterCgroup: string;
  readonly cgroup: RunCgroup;
  readonly provided: Provided;
  /** The unit's host pid once bwrap reports it (null if it never started). */
  readonly unitPid: Promise<number | null>;
  /** Resolves after the launcher ended and every process left in the cgroup was killed; the
   * cgroup still exists, so the meter can take its last reading. */
  readonly done: Promise<SandboxExit>;
  /** Removes the cgroup and the host's files (after `done`). */
  release(): Promise<void>;
  /** Sends `signal` to every process of the sandbox (its whole cgroup). */
  signal(signal: NodeJS.Signals): void;
  /**
   * A gated sandbox: resolves true once its mounts are final and its inner stage waits for `go`,
   * false when it ended first. Always false for a sandbox that is not gated.
   */
  readonly ready: Promise<boolean>;
  /** A gated sandbox: lets the command run (true), or (false) makes the inner stage exit 125 unrun. */
  proceed(go: boolean): void;
}

/**
 * reachable says whether host uid `uid` (no groups) can look up `dir`: every ancestor must be
 * searchable by others, or owned by that uid and searchable by its owner. bwrap resolves the
 * workspace as that uid; an unreachable one is bound elsewhere first (launcherArgv).
 */
export function reachable(dir: string, uid: number): boolean {
  const parts = resolve(dir)
    .split("/")
    .filter((x) => x !== "");
  for (let i = 0; i < parts.length; i++) {
    const st = statSync("/" + parts.slice(0, i).join("/"));
    if (!((st.mode & 0o001) !== 0 || (st.uid === uid && (st.mode & 0o100) !== 0))) return false;
  }
  return true;
}

/** imageMount: where an image's rootfs is bound for bwrap, when the sandbox's uid cannot reach it (§14.9). */
function imageMount(source: string, uid: number): { source: string; mountpoint: string } | undefined {
  return reachable(source, uid) ? undefined : { source, mountpoint: sharedSystemDir({ ".sbx-rootfs": "" }) };
}

/** sandboxUnavailableReason (§5) says why this host cannot start a sandbox, or null when it can. */
export function sandboxUnavailableReason(): string | null {
  if (process.platform !== "linux") return "the sandbox needs Linux";
  if (process.getuid?.() !== 0) return "the reference sandbox is started by root (cgroups, uid drop)";
  for (const t of Object.values(TOOLS))
    try {
      accessSync(t, constants.X_OK);
    } catch {
      return `${t} is missing (Debian package bubblewrap)`;
    }
  try {
    accessSync(LAUNCH_PATH, constants.X_OK);
  } catch {
    return `the sandbox launcher is not built (${LAUNCH_PATH}); run npm run build`;
  }
  return null;
}

interface Status {
  /** The unit's host pid, as soon as bwrap reports it; null when bwrap ends without starting it. */
  readonly pid: Promise<number | null>;
  /** bwrap's reported exit code, once its status descriptor closes. */
  readonly code: Promise<number | null>;
}

function statusReader(stream: Readable): Status {
  let text = "";
  let gotPid: (p: number | null) => void = () => undefined;
  const pid = new Promise<number | null>((r) => (gotPid = r));
  const find = (key: string): number | null => {
    const m = new RegExp(`"${key}"\\s*:\\s*(\\d+)`).exec(text)?.[1];
    return m === undefined ? null : Number(m);
  };
  const code = new Promise<number | null>((resolve) => {
    stream.setEncoding("utf8");
    stream.on("data", (s: string) => {
      if (text.length < 65536) text += s;
      const p = find("child-pid");
      if (p !== null) gotPid(p);
    });
    stream.on("error", () => undefined);
    stream.on("close", () => {
      gotPid(find("child-pid"));
      resolve(find("exit-code"));
    });
  });
  return { pid, code };
}

/** readyReader resolves true when the gated sandbox's inner stage says "up", false when it ends first. */
function readyReader(stream: Readable): Promise<boolean> {
  return new Promise((resolve) => {
    let text = "";
    stream.setEncoding("utf8");
    stream.on("data", (s: string) => {
      text += s;
      if (text.includes("\n")) resolve(text.startsWith("up\n"));
    });
    stream.on("error", () => resolve(false));
    stream.on("close", () => resolve(false));
  });
}

/**
 * handOver (§5.1) gives the workspace to the sandbox's user, as startSandbox does first: a caller
 * that takes the workspace's stamps before the sandbox starts (the journal's file scan, §8.2) hands
 * it over first, so the hand-over's own change of owner (a new ctime on every file) is not read as
 * the unit's writes. Refuses what resolveSpec refuses.
 */
export function handOver(o: SandboxOptions): void {
  handWorkspace(o.workspace, resolveSpec(o).hostUid);
}

/**
 * startSandbox (§5.1–§5.4) starts `argv` in a new sandbox with stdio `stdin` (ignored or a pipe) and
 * stdout/stderr pipes. Refuses (`SandboxUnavailable`) where no sandbox can be built, and
 * (`LimitUnavailable`, `CgroupUnavailable`, `DiskLimitUnavailable` for a writable bind) when a limit
 * cannot be applied: it never runs unlimited.
 * A workspace that is not a directory is a RangeError.
 */
export function startSandbox(
  argv: readonly string[],
  o: SandboxOptions,
  stdin: StdioNull | StdioPipe,
): Sandbox {
  const why = sandboxUnavailableReason();
  if (why !== null) throw new HostError("SandboxUnavailable", why);
  if (argv.length === 0) throw new RangeError("startSandbox: argv is empty");
  if (!statSync(o.workspace).isDirectory())
    throw new RangeError(`workspace ${o.workspace} is not a directory`);
  // §5.3 item 2: a host path bound writable would be a writable place without a kernel bound.
  const writable = (o.binds ?? []).filter((b) => b.writable).map((b) => b.inside);
  if (writable.length > 0)
    throw new HostError(
      "DiskLimitUnavailable",
      `host paths bound writable have no disk bound: ${writable.join(", ")}`,
    );
  const r = resolveSpec(o);
  const hostUid = r.hostUid;
  // The seccomp program and the generated /etc are the same for every run with this user: made once
  // per process, bound read-only (or read through a descriptor) by each sandbox.
  const sys = systemContents(r.user);
  const etc = o.image?.etc(r.user, "sandbox") ?? sharedSystemDir(sys.etc);
  const seccompFile = join(sharedSystemDir({ "seccomp.bpf": sys.seccomp }), "seccomp.bpf");
  const { cgroup: cg, meter: meterCgroup } = makeRunCgroup(r.limits, o.hierarchies);
  let child: ChildProcess;
  let bound: BoundWorkspace | null = null;
  try {
    o.onCgroup?.(cg.dirs, meterCgroup);
    // §5.3 A sandbox that outlives its supervisor keeps its cgroups from every stale sweep: the
    // record onCgroup wrote names them, and a dead supervisor's interval is read from their counters.
    if (o.outlivesSupervisor === true) holdRunCgroup(cg.dirs);
    handWorkspace(o.workspace, hostUid);
    // §5.3 A writable workspace is bounded by the kernel as the unit writes (disk.ts).
    if (o.workspaceReadOnly !== true) bound = boundWorkspace(o.workspace, r.workspaceBytes, hostUid);
    const rootfs = o.image === undefined ? undefined : imageMount(o.image.rootfs, hostUid);
    const system = o.image?.entries(rootfs?.mountpoint ?? o.image.rootfs);
    const [file, ...args] = launchArgv(r, {
      argv: [...(o.wrap ?? []), ...argv],
      gated: o.gated === true,
      binds: o.binds ?? [],
      workspaceReadOnly: o.workspaceReadOnly === true,
      ...(system ? { system } : {}),
      ...(o.outlivesSupervisor === true ? { outlivesParent: true } : {}),
      cgroups: cg.dirs,
      seccompFile,
      workspace: o.workspace,
      etc,
      mountpoint: reachable(o.workspace, hostUid) ? null : sharedSystemDir({}),
      ...(rootfs ? { rootfs } : {}),
    });
    const stdio = [stdin, "pipe", "pipe", "ignore", "ignore", "ignore", "pipe"] as const;
    const gate = o.gated === true ? (["pipe", "pipe"] as const) : ([] as const);
    child = spawn(file ?? "", args, { stdio: [...stdio, ...gate], env: {}, detached: true });
  } catch (e) {
    void removeRunCgroup(cg).catch(() => undefined);
    bound?.release();
    throw e;
  }
  const status = statusReader(child.stdio[STATUS_FD as 4] as Readable);
  const ready =
    o.gated === true ? readyReader(child.stdio[GATE_READY_FD as 4] as Readable) : Promise.resolve(false);
  const goPipe = o.gated === true ? (child.stdio[GATE_GO_FD as 4] as Writable) : null;
  goPipe?.on("error", () => undefined);
  const provided = providedFacts(r, {
    binds: o.binds ?? [],
    workspaceReadOnly: o.workspaceReadOnly === true,
    ...(o.relayedPorts ? { relayedPorts: o.relayedPorts } : {}),
    ...(o.image ? { image: o.image.hex } : {}),
  });
  let killed = false;
  const closed = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.once("error", () => resolve([null, null]));
    child.once("close", (code, signal) => resolve([code, signal]));
  });
  const done = closed.then(async ([code, signal]) => {
    const reported = await status.code;
    const pid = await status.pid;
    const hits = limitHits(cg);
    await killRunCgroup(cg);
    let disk: boolean;
    try {
      disk = bound?.full() === true || workspaceBytes(o.workspace) > provided.workspaceBytes;
    } catch (e) {
      // Fail closed: a workspace the host cannot size (more entries than it walks) passed its bound.
      if (!(e instanceof RangeError)) throw e;
      disk = true;
    } finally {
      bound?.release();
    }
    const setupFailed =
      pid === null || (reported === null && signal === null && !killed && hits.oomKills === 0);
    return { code: reported ?? code, signal, started: pid !== null, setupFailed, hits: { ...hits, disk } };
  });
  return {
    child,
    meterCgroup,
    cgroup: cg,
    provided,
    unitPid: status.pid,
    done,
    release: async () => {
      bound?.release();
      await removeRunCgroup(cg);
    },
    ready,
    proceed(go) {
      if (goPipe === null || goPipe.destroyed) return;
      if (go) goPipe.end("go\n");
      else goPipe.destroy();
    },
    signal(sig) {
      killed ||= sig === "SIGKILL";
      // The launcher is bwrap's monitor: a SIGTERM would end it, and --die-with-parent would then
      // SIGKILL the unit, so a graceful stop goes to the sandbox's processes only.
      for (const pid of new Set(cg.dirs.flatMap(cgroupProcs)))
        if (sig !== "SIGKILL" && pid === child.pid) continue;
        else
          try {
            process.kill(pid, sig);
          } catch {
            // gone
          }
    },
  };
}
