// §5.1–§5.4 The bubblewrap command line of a sandbox, and the launcher that starts it: the launcher
// (native/launch.c, run as root) joins the run's cgroups, closes every descriptor but stdio, the
// status descriptor and, for a gated sandbox, the gate's two handshake descriptors, binds the
// workspace where the sandbox's uid can reach it (in a private mount namespace, only when a parent of
// the workspace is closed to that uid), opens the seccomp program, the workspace and the generated
// /etc on fixed descriptors, drops to the sandbox's unprivileged host uid (no groups, no
// capabilities in any set, the bounding and ambient sets emptied; each step read back) and execs
// bwrap. bwrap then unshares every namespace (user, mount, pid, ipc, uts, cgroup, network), maps the
// user inside onto that host uid, and runs the command.
import { fileURLToPath } from "node:url";
import { systemEntries, type SandboxUser, type SystemEntry } from "./system.ts";

/**
 * Descriptors the launcher opens for bwrap (after closing every other but 0, 1, 2, STATUS_FD and,
 * open only for a gated sandbox, the gate's two handshake descriptors).
 */
export const SECCOMP_FD = 3;
export const WORKSPACE_FD = 4;
export const ETC_FD = 5;
/** bwrap's --json-status-fd: the host learns the unit's pid and bwrap's exit code from it. */
export const STATUS_FD = 6;
/** With the exec gate (§5.5.5): the sandbox's inner stage writes "up" here once its mounts are final. */
export const GATE_READY_FD = 7;
/** ... and reads "go" here (written by the host once the gate has attached) before it execs the command. */
export const GATE_GO_FD = 8;

/**
 * The inner stage of a gated sandbox (§5.5.5), run by bwrap inside before the unit's command: it
 * says "up", waits for "go", closes both descriptors and execs the command. Without "go" (the host
 * could not attach the gate and closed the pipe) it exits 125 and the command never runs.
 */
const GATE_STAGE = `echo up >&${GATE_READY_FD} || exit 125; read go <&${GATE_GO_FD} || exit 125; [ "$go" = go ] || exit 125; exec ${GATE_READY_FD}>&- ${GATE_GO_FD}<&-; exec "$@"`;

/** The first descriptor of the extra binds (a grant's filesystem resources): BIND_FD + i for bind i. */
export const BIND_FD = 9;

/** One host path bound in besides the system and the workspace (a grant's filesystem resource). */
export interface ExtraBind {
  /** The host path (opened by the launcher, as root, and handed to bwrap as a descriptor). */
  readonly host: string;
  /** Where it appears inside. */
  readonly inside: string;
  readonly writable: boolean;
}

/** Where bubblewrap lives (Debian package `bubblewrap`). */
export const TOOLS = {
  bwrap: "/usr/bin/bwrap",
} as const;

/** The launcher built by `npm run build` (packages/host/native/build.sh, from launch.c). */
export const LAUNCH_PATH = fileURLToPath(new URL("../../native/build/sbx-launch", import.meta.url));

/** What one sandbox is made of, as the command line states it. */
export interface BwrapPlan {
  readonly user: SandboxUser;
  /** The workspace's path inside (§5.4 workspace folder). */
  readonly workspaceFolder: string;
  readonly hostname: string;
  /** Size of the private /tmp in bytes. */
  readonly tmpBytes: number;
  /** The environment inside: exactly these variables, nothing of the host's. */
  readonly env: Readonly<Record<string, string>>;
  readonly argv: readonly string[];
  /** The system entries (default: what the host has, systemEntries()). */
  readonly system?: readonly SystemEntry[];
  /** The command runs after the gate's handshake (GATE_READY_FD, GATE_GO_FD; §5.5.5). */
  readonly gated?: boolean;
  /** Host paths bound in besides the workspace, on BIND_FD + i (jcp grants' filesystem resources). */
  readonly binds?: readonly Pick<ExtraBind, "inside" | "writable">[];
  /** The workspace is bound read-only (a grant gives it `read` only). */
  readonly workspaceReadOnly?: boolean;
  /**
   * The sandbox outlives the process that started it (a durable run, §13.7.4): no
   * --die-with-parent, so its processes stay in their cgroup when the supervisor dies.
   */
  readonly outlivesParent?: boolean;
}

/**
 * bwrapArgs (§5.1–§5.4) returns bwrap's arguments for `plan` (without the program name). Every
 * namespace is new and none is shared (no --share-net: the sandbox has only its own loopback);
 * further user namespaces are disabled inside; every capability is dropped; the filter on
 * SECCOMP_FD is loaded; the command gets a new session (no TIOCSTI into the caller's terminal) and
 * dies with its parent, unless the sandbox outlives it (a durable run's, §13.7.4).
 */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const a = ["--unshare-all", "--unshare-user", "--disable-userns"];
  if (plan.outlivesParent !== true) a.push("--die-with-parent");
  a.push("--new-session");
  a.push("--cap-drop", "ALL", "--uid", String(plan.user.uid), "--gid", String(plan.user.gid));
  a.push("--hostname", plan.hostname);
  for (const e of plan.system ?? systemEntries())
    if (e.kind === "symlink") a.push("--symlink", e.target, e.path);
    else a.push("--ro-bind", e.source ?? e.path, e.path);
  a.push("--ro-bind-fd", String(ETC_FD), "/etc");
  // bwrap mounts /proc/sys, /proc/sysrq-trigger, /proc/irq and /proc/bus read-only over the new proc.
  a.push("--proc", "/proc", "--dev", "/dev");
  a.push("--size", String(plan.tmpBytes), "--perms", "1777", "--tmpfs", "/tmp");
  // §5.3 /dev/shm is a tmpfs of its own with /tmp's size (bwrap's /dev tmpfs has none).
  a.push("--size", String(plan.tmpBytes), "--perms", "1777", "--tmpfs", "/dev/shm");
  a.push(
    plan.workspaceReadOnly === true ? "--ro-bind-fd" : "--bind-fd",
    String(WORKSPACE_FD),
    plan.workspaceFolder,
  );
  a.push("--chdir", plan.workspaceFolder);
  (plan.binds ?? []).forEach((b, i) =>
    a.push(b.writable ? "--bind-fd" : "--ro-bind-fd", String(BIND_FD + i), b.inside),
  );
  // The root bwrap builds and its /dev are tmpfs the unit could write (the unit owns them): made
  // read-only, /tmp, /dev/shm and the workspace stay the only writable mounts.
  a.push("--remount-ro", "/dev", "--remount-ro", "/");
  a.push("--clearenv");
  for (const [k, v] of Object.entries(plan.env).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
    a.push("--setenv", k, v);
  a.push("--seccomp", String(SECCOMP_FD), "--json-status-fd", String(STATUS_FD));
  const argv = plan.gated === true ? ["/bin/sh", "-c", GATE_STAGE, "sbx-gate", ...plan.argv] : plan.argv;
  return [...a, "--", ...argv];
}

/** What the launcher needs besides the bwrap arguments. */
export interface LaunchPaths {
  /** Cgroup directories to join (cgroup.procs written in each, in order). */
  readonly cgroups: readonly string[];
  /** Host file holding the compiled seccomp program. */
  readonly seccompFile: string;
  /** Host workspace directory. */
  readonly workspace: string;
  /** Host directory holding the generated /etc. */
  readonly etc: string;
  /**
   * An empty host directory every uid can reach, where the workspace is bound for bwrap (in a private
   * mount namespace), or null when the sandbox's uid can reach the workspace where it is.
   */
  readonly mountpoint: string | null;
  /** The unprivileged host uid (and gid) the sandbox runs as; never 0. */
  readonly hostUid: number;
  /**
   * An image's rootfs (§14.9) to bind, in the launcher's private mount namespace, onto an empty
   * directory every uid can reach (the system entries' sources lie under `mountpoint`).
   */
  readonly rootfs?: { readonly source: string; readonly mountpoint: string };
  /** Host paths of the extra binds, in BwrapPlan.binds order: opened as root on BIND_FD + i. */
  readonly binds?: readonly string[];
}

/** launcherArgv (§5.1) returns the full argv (program first) that starts the sandbox. */
export function launcherArgv(p: LaunchPaths, bwrap: readonly string[]): string[] {
  if (!Number.isSafeInteger(p.hostUid) || p.hostUid <= 0)
    throw new RangeError("the sandbox's host uid must be a positive integer (never root)");
  return [
    LAUNCH_PATH,
    String(p.hostUid),
    String(p.cgroups.length),
    ...p.cgroups,
    p.seccompFile,
    p.workspace,
    p.etc,
    p.mountpoint ?? "",
    p.rootfs?.source ?? "",
    p.rootfs?.mountpoint ?? "",
    String(p.binds?.length ?? 0),
    ...(p.binds ?? []),
    "--",
    TOOLS.bwrap,
    ...bwrap,
  ];
}
