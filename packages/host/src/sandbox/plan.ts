// §5.1–§5.4 One builder for the S1 sandbox: what `sbx run` starts (sandbox.ts startSandbox) and what
// a warm pool parks (../pool/parked.ts parkSandbox) come from the same manifest options through
// these functions, so the two cannot drift apart: the same defaults, the same cgroup with its
// limits, the same generated /etc and seccomp program, the same bwrap arguments and launcher argv,
// the same facts stated as provided. The callers differ only in where the host's files live (a
// parked sandbox outlives the process that built it) and in the command inside.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { bwrapArgs, type ExtraBind, launcherArgv, type LaunchPaths } from "./bwrap.ts";
import { createRunCgroup, DEFAULT_LIMITS, type Hierarchies, type Limits, type RunCgroup } from "./cgroup.ts";
import { seccompProgram } from "./seccomp.ts";
import { etcFiles, sandboxUser, type SandboxUser, type SystemEntry } from "./system.ts";

/** The unprivileged host uid sandboxes run as by default (`nobody`); never 0. */
export const DEFAULT_HOST_UID = 65534;
/** Default size of the private /tmp: 64 MiB. */
export const DEFAULT_TMP_BYTES = 64 << 20;
/** Default bound on the workspace's size, enforced as the unit writes (disk.ts): 1 GiB. */
export const DEFAULT_WORKSPACE_BYTES = 1 << 30;
/** The default PATH inside. */
export const SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** The sandbox's host name (its generated /etc/hostname and /etc/hosts name it). */
export const SANDBOX_HOSTNAME = "sandbox";

/** The manifest's part of a sandbox (§5.4): what a run and a pool item are both built from. */
export interface SandboxSpec {
  /** The workspace's path inside (default /work). */
  readonly workspaceFolder?: string;
  /** The user inside (manifest remoteUser/containerUser); default `unit` (uid 1000). */
  readonly user?: string;
  /** Variables inside besides PATH, HOME, USER, LANG (manifest env); nothing of the host's. */
  readonly env?: Readonly<Record<string, string>>;
  readonly limits?: Partial<Limits>;
  readonly tmpBytes?: number;
  /** Largest workspace, in bytes, enforced as the unit writes (disk.ts); reaching it is the disk limit hit. */
  readonly workspaceBytes?: number;
  /** The unprivileged host uid the sandbox runs as (default 65534). */
  readonly hostUid?: number;
}

/** A SandboxSpec with every default filled in and checked. */
export interface ResolvedSpec {
  readonly hostUid: number;
  readonly user: SandboxUser;
  readonly limits: Limits;
  readonly tmpBytes: number;
  readonly workspaceBytes: number;
  readonly workspaceFolder: string;
  /** Every variable set inside (PATH, HOME, USER, LANG, then the manifest's). */
  readonly env: Readonly<Record<string, string>>;
}

/** What the host set up, as facts: the level it may state is computed from these (§9). */
export interface Provided {
  readonly isolated: true;
  /** No network, or only these host loopback ports relayed in (a grant names each, §5.2, §5.6). */
  readonly network: "none" | { readonly loopback: readonly number[] };
  readonly limits: Limits;
  readonly hostUid: number;
  readonly user: SandboxUser;
  readonly tmpBytes: number;
  readonly workspaceBytes: number;
  /** Where the workspace is mounted inside (the manifest's workspaceFolder, else /work). */
  readonly workspaceFolder: string;
  /** The extra host paths bound in, as inside path and mode (none without a grant). */
  readonly binds: readonly { readonly inside: string; readonly writable: boolean }[];
  readonly workspaceReadOnly: boolean;
  /**
   * What the system was built from (§14.9.5): the sha256 hex of the image whose verified rootfs it
   * is, or null for the host's /usr. Checked against the manifest before signing (../run/built.ts).
   */
  readonly image: string | null;
}

/**
 * resolveSpec (§5.4) fills in the defaults of `o`. Refuses (RangeError) a user name that is not a
 * portable name and a workspace folder that is not a plain absolute path.
 */
export function resolveSpec(o: SandboxSpec): ResolvedSpec {
  const user = sandboxUser(o.user);
  const folder = o.workspaceFolder ?? "/work";
  if (!/^\/[A-Za-z0-9._/-]{1,200}$/.test(folder) || folder.split("/").some((s) => s === ".." || s === "."))
    throw new RangeError(`workspace folder ${folder} must be a plain absolute path`);
  return {
    hostUid: o.hostUid ?? DEFAULT_HOST_UID,
    user,
    limits: { ...DEFAULT_LIMITS, ...o.limits },
    tmpBytes: o.tmpBytes ?? DEFAULT_TMP_BYTES,
    workspaceBytes: o.workspaceBytes ?? DEFAULT_WORKSPACE_BYTES,
    workspaceFolder: folder,
    env: { PATH: SANDBOX_PATH, HOME: folder, USER: user.name, LANG: "C.UTF-8", ...o.env },
  };
}

/** systemContents (§5.4): the generated /etc (file name → text) and the seccomp program for `user`. */
export function systemContents(user: SandboxUser): { etc: Record<string, string>; seccomp: Buffer } {
  return { etc: etcFiles(user, SANDBOX_HOSTNAME), seccomp: seccompProgram() };
}

/** runCgroupName: a fresh run cgroup's name, `sbx-run-<this pid>-<random>` (cgroup.ts sweepStale reads the pid). */
export function runCgroupName(): string {
  return `sbx-run-${String(process.pid)}-${randomBytes(6).toString("hex")}`;
}

/**
 * makeRunCgroup (§5.3) creates a fresh run cgroup (runCgroupName) with `limits` and names the
 * directory the meter reads (cgroup2, else v1 cpuacct). Refuses as createRunCgroup does.
 */
export function makeRunCgroup(
  limits: Limits,
  hierarchies?: Hierarchies,
): { cgroup: RunCgroup; meter: string } {
  const name = runCgroupName();
  const cg = createRunCgroup(name, limits, hierarchies);
  const meter = cg.v2 ?? cg.dirs.find((d) => existsSync(join(d, "cpuacct.usage"))) ?? cg.dirs[0] ?? "";
  return { cgroup: cg, meter };
}

/** What one launch needs besides the resolved spec: the command, its mounts, the host's paths. */
export interface LaunchParts extends Omit<LaunchPaths, "hostUid" | "binds"> {
  /** The command inside (after any wrap prefix). */
  readonly argv: readonly string[];
  /** The command waits inside the finished sandbox until the host says go (§5.5.5). */
  readonly gated?: boolean;
  /** Host paths bound in besides the workspace, in order. */
  readonly binds?: readonly ExtraBind[];
  readonly workspaceReadOnly?: boolean;
  /** The system view (an image's, §14.9); default the host's. */
  readonly system?: readonly SystemEntry[];
  /** The sandbox outlives its supervisor (bwrap.ts BwrapPlan.outlivesParent). */
  readonly outlivesParent?: boolean;
}

/**
 * launchArgv (§5.1) returns the full argv (launcher first) that starts the sandbox of `r` with
 * `l`'s command, mounts and host paths. Refuses (RangeError) a host uid that is root.
 */
export function launchArgv(r: ResolvedSpec, l: LaunchParts): string[] {
  const binds = l.binds ?? [];
  const bw = bwrapArgs({
    user: r.user,
    workspaceFolder: r.workspaceFolder,
    hostname: SANDBOX_HOSTNAME,
    tmpBytes: r.tmpBytes,
    env: r.env,
    argv: l.argv,
    gated: l.gated === true,
    binds: binds.map((b) => ({ inside: b.inside, writable: b.writable })),
    workspaceReadOnly: l.workspaceReadOnly === true,
    ...(l.system ? { system: l.system } : {}),
    ...(l.outlivesParent === true ? { outlivesParent: true } : {}),
  });
  const paths: LaunchPaths = {
    cgroups: l.cgroups,
    seccompFile: l.seccompFile,
    workspace: l.workspace,
    etc: l.etc,
    mountpoint: l.mountpoint,
    hostUid: r.hostUid,
    ...(l.rootfs ? { rootfs: l.rootfs } : {}),
    binds: binds.map((b) => b.host),
  };
  return launcherArgv(paths, bw);
}

/**
 * providedFacts (§9) states what a sandbox of `r` provides: isolated, the limits, user and sizes,
 * the workspace's folder and mode, the extra binds stated (a pool's hand-off folder is not one),
 * and a network of none unless granted loopback ports are relayed in.
 */
export function providedFacts(
  r: ResolvedSpec,
  o: {
    readonly binds?: readonly Pick<ExtraBind, "inside" | "writable">[];
    readonly workspaceReadOnly?: boolean;
    readonly relayedPorts?: readonly number[];
    /** The image the system is (ImageSystem.hex); none: the host's. */
    readonly image?: string;
  } = {},
): Provided {
  return {
    isolated: true,
    network: o.relayedPorts?.length ? { loopback: [...o.relayedPorts].sort((a, b) => a - b) } : "none",
    limits: r.limits,
    hostUid: r.hostUid,
    user: r.user,
    tmpBytes: r.tmpBytes,
    workspaceBytes: r.workspaceBytes,
    workspaceFolder: r.workspaceFolder,
    binds: (o.binds ?? []).map((b) => ({ inside: b.inside, writable: b.writable })),
    workspaceReadOnly: o.workspaceReadOnly === true,
    image: o.image ?? null,
  };
}
