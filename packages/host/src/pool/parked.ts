// §15.3 A pool item's parked sandbox: the same S1 sandbox `sbx run` builds (the launcher, bwrap, the
// run's cgroup with its limits, the seccomp program, the generated /etc, the workspace bound at its
// folder), started with a small waiter as its command and then frozen by the cgroup freezer.
//
// The hand-off (§15.4). The item's control folder `ctl/` is bound read-only at /.sbx-claim and holds
// two FIFOs, both owned by root with the sandbox's host gid:
//   ready (0620)  the waiter writes "up" once the sandbox is set up (its mounts are final);
//   go    (0660)  the waiter then holds it open (read-write, so the FIFO lives while it is frozen)
//                 and blocks reading one line. Outside the sandbox only the host reaches it; inside,
//                 nothing but the waiter runs before the claim, and the unit's own writes after it
//                 reach no one (the waiter has read its line and closed it).
// A claim writes one line, the unit's argv quoted for the shell, into `go` and thaws the cgroup; the
// waiter reads it and execs the argv in place (same process, same namespaces, same cgroup). Nothing
// of the host's is in the line but the argv. The sandbox's stdout and stderr are files in the item's
// folder, opened by the host at creation; the waiter writes nothing to them, so they hold the unit's
// output alone. An item is used once: after its unit ends, its cgroup is killed and removed.
//
// The sandbox must outlive `sbx pool create` (bwrap dies with its parent): its parent is a keeper,
// a detached `/bin/sh` that waits for the launcher and holds nothing else. Killing the keeper kills
// the sandbox (bwrap's --die-with-parent), so no parked sandbox is left without one.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { HostError } from "../errors.ts";
import { LAUNCH_PATH } from "../sandbox/bwrap.ts";
import {
  cgroupProcs,
  holdRunCgroup,
  killRunCgroup,
  limitHits,
  removeRunCgroup,
  type RunCgroup,
} from "../sandbox/cgroup.ts";
import {
  launchArgv,
  makeRunCgroup,
  providedFacts,
  resolveSpec,
  SANDBOX_HOSTNAME,
  systemContents,
  type SandboxSpec,
} from "../sandbox/plan.ts";
import { imageEtc, imageSystem, rootfsEntries } from "../image/system.ts";
import {
  reachable,
  sandboxUnavailableReason,
  type Provided,
  type Sandbox,
  type SandboxExit,
  type SandboxOptions,
} from "../sandbox/sandbox.ts";
import type { SandboxUser } from "../sandbox/system.ts";
import { boundWorkspace, workspaceFull, writeBack } from "../sandbox/disk.ts";
import { handWorkspace, workspaceBytes } from "../sandbox/workspace.ts";
import {
  freezeProcesses,
  freezeTarget,
  frozenWithin,
  isFrozen,
  thawProcesses,
  residentBytes,
} from "../durable/freezer.ts";
import { readCgroupCpuUs } from "../meter/index.ts";
import { startTicks } from "../durable/lock.ts";
import { faultPoint } from "../store/fault.ts";
import { writeFileDurably } from "../store/durable.ts";
import {
  beginStarting,
  clearStarting,
  freshHostDir,
  killSandboxNow,
  removeHostFiles,
  writeStarting,
} from "./starting.ts";

/** Where the control folder appears inside the sandbox. */
export const CLAIM_DIR = "/.sbx-claim";

/**
 * The waiter (run by /bin/sh inside): says "up", blocks on `go`, reads one line and execs it. The
 * line is `'arg' 'arg'…` (quoteArgv); a newline inside an argument travels as '"$nl"'.
 */
const WAITER = [
  "nl='",
  "'",
  `printf 'up\\n' >${CLAIM_DIR}/ready || exit 125`,
  `exec 3<>${CLAIM_DIR}/go || exit 125`,
  "IFS= read -r req <&3 || exit 125",
  "exec 3<&-",
  '[ -n "$req" ] || exit 125',
  'eval "exec $req"',
].join("\n");

/**
 * The keeper (a detached /bin/sh outside the sandbox): waits for the line "go" on its stdin, which
 * the host writes once the keeper is recorded (starting.ts), then starts the launcher and waits for
 * it. At end of file (its creator died before recording it) it exits and starts nothing.
 */
const KEEPER = 'IFS= read -r go && [ "$go" = go ] || exit 125\n"$@" </dev/null & wait $!';

/** quoteArgv writes argv as one line the waiter evaluates back into exactly that argv. */
export function quoteArgv(argv: readonly string[]): string {
  if (argv.length === 0) throw new RangeError("quoteArgv: argv is empty");
  return argv
    .map((a) => {
      if (a.includes("\0")) throw new RangeError("an argument holds a NUL byte");
      return `'${a.replaceAll("'", `'\\''`).replaceAll("\n", `'"$nl"'`)}'`;
    })
    .join(" ");
}

/** An image's verified rootfs (§14.9.4) that a parked sandbox's system is built from. */
export interface ParkedImage {
  /** The host directory of the verified rootfs. */
  readonly rootfs: string;
  /** Its tree digest (`sha256:<hex>`). */
  readonly tree: string;
  /** The image manifest's sha256 hex. */
  readonly hex: string;
}

/** How a parked sandbox is built: the manifest's part of a run's sandbox (../sandbox/plan.ts). */
export interface ParkOptions extends SandboxSpec {
  /** How long the sandbox may take to say "up" (default 10 s). */
  readonly readyMs?: number;
  /** §14.9.5 The system is this image's rootfs, as `sbx run --manifest` builds it (else the host's /usr). */
  readonly imageRootfs?: ParkedImage;
}

/** What an item's sandbox.json records of its parked sandbox. */
export interface ParkedInfo {
  readonly cgroup: RunCgroup;
  readonly meter_cgroup: string;
  readonly keeper: { readonly pid: number; readonly start: string };
  /** The sandbox's first process (the waiter, then the unit) as the host numbers it. */
  readonly unit_pid: number;
  /** An empty folder the workspace is bound onto for bwrap, when the host uid cannot reach it. */
  readonly mountpoint: string | null;
  /** The folder holding this sandbox's generated /etc and seccomp program (systemFiles). */
  readonly system: string;
  readonly provided: Provided;
  /** Every variable set inside (resolveSpec: PATH, HOME, USER, LANG, the manifest's and image's). */
  readonly env?: Readonly<Record<string, string>>;
  /** The image whose rootfs is the system; absent: the host's /usr. */
  readonly image?: ParkedImage;
  readonly parked_ms: number;
  /** The cgroup's CPU µs already accounted (at parking, then at each accrual). */
  cpu_us: string;
}

/** The control folder and its FIFOs, in the sandbox's system folder (reachable by its uid). */
function ctlPaths(systemDir: string) {
  return {
    ctl: join(systemDir, "ctl"),
    go: join(systemDir, "ctl", "go"),
    ready: join(systemDir, "ctl", "ready"),
  };
}

/** The files of one item's sandbox. */
export function parkedPaths(itemDir: string) {
  return {
    info: join(itemDir, "sandbox.json"),
    out: join(itemDir, "stdout"),
    err: join(itemDir, "stderr"),
    status: join(itemDir, "status"),
    workspace: join(itemDir, "workspace"),
  };
}

/**
 * systemFiles writes the generated /etc and the seccomp program of one parked sandbox into a fresh
 * folder under the host's temporary folder (mode 0755: bwrap, already the sandbox's uid, must reach
 * /etc): a parked sandbox outlives the process that built it, so these cannot be the per-process
 * copies `sbx run` shares (removed when that process exits). destroyParked removes the folder.
 * `dir` (default a fresh name) must not exist yet.
 */
export function systemFiles(
  user: SandboxUser,
  dir = freshHostDir("system"),
): { dir: string; etc: string; seccomp: string } {
  mkdirSync(dir, { mode: 0o700 });
  const etc = join(dir, "etc");
  mkdirSync(etc, { mode: 0o755 });
  const files = systemContents(user);
  for (const [name, body] of Object.entries(files.etc)) writeFileSync(join(etc, name), body, { mode: 0o644 });
  const seccomp = join(dir, "seccomp.bpf");
  writeFileSync(seccomp, files.seccomp, { mode: 0o644 });
  chmodSync(dir, 0o755);
  chmodSync(etc, 0o755);
  return { dir, etc, seccomp };
}

function mkfifo(path: string, mode: number, gid: number): void {
  const r = spawnSync("mkfifo", ["-m", "600", path], { stdio: "ignore" });
  if (r.status !== 0) throw new HostError("SandboxFailed", `cannot make the FIFO ${path}`);
  chownSync(path, 0, gid);
  chmodSync(path, mode);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** statusField reads a number bwrap reported on its status descriptor (child-pid, exit-code). */
function statusField(statusFile: string, key: string): number | null {
  let text = "";
  try {
    text = readFileSync(statusFile, "utf8");
  } catch {
    return null;
  }
  const m = new RegExp(`"${key}"\\s*:\\s*(\\d+)`).exec(text)?.[1];
  return m === undefined ? null : Number(m);
}

function tail(path: string, limit = 4000): string {
  try {
    const t = readFileSync(path, "utf8");
    return t.slice(Math.max(0, t.length - limit)).trim();
  } catch {
    return "";
  }
}

/**
 * parkSandbox (§15.3) starts the item's sandbox with the waiter as its command, waits until the
 * waiter says "up" (the sandbox is fully set up), freezes its cgroup and confirms from the kernel
 * that it is frozen; records it in sandbox.json. Refuses `SandboxUnavailable` where no sandbox can
 * be built, `SandboxFailed` when it does not come up, `FreezeFailed` when the kernel does not
 * confirm the freeze; on any refusal, whatever was started is killed and removed.
 */
export async function parkSandbox(
  poolDir: string,
  itemDir: string,
  o: ParkOptions = {},
): Promise<ParkedInfo> {
  const why = sandboxUnavailableReason();
  if (why !== null) throw new HostError("SandboxUnavailable", why);
  const p = parkedPaths(itemDir);
  const r = resolveSpec(o);
  const hostUid = r.hostUid;
  mkdirSync(p.workspace, { recursive: true });
  handWorkspace(p.workspace, hostUid);
  // §5.3 The workspace bounded by the kernel as the unit writes, as startSandbox does (disk.ts); a
  // crash from here on leaves the mount to whatever removes the item (removeTree detaches it).
  const disk = boundWorkspace(p.workspace, r.workspaceBytes, hostUid);
  // Each part is named in the item's starting.json before it is made (starting.ts), so a SIGKILL at
  // any step leaves nothing a later `sbx pool create`, `list` or `destroy` cannot find and remove.
  const mnt = reachable(p.workspace, hostUid) ? null : freshHostDir("mnt");
  const system = freshHostDir("system");
  let rec = beginStarting(itemDir, system, mnt);
  let keeper: ChildProcess | null = null;
  let cg: RunCgroup | null = null;
  const fds: number[] = [];
  try {
    const sys = systemFiles(r.user, system);
    const c = ctlPaths(sys.dir);
    mkdirSync(c.ctl, { mode: 0o750 });
    chownSync(c.ctl, 0, hostUid);
    chmodSync(c.ctl, 0o750);
    mkfifo(c.go, 0o660, hostUid);
    mkfifo(c.ready, 0o620, hostUid);
    if (mnt !== null) {
      mkdirSync(mnt, { mode: 0o755 });
      chmodSync(mnt, 0o755);
    }
    const view = o.imageRootfs ? imageView(o.imageRootfs, r.user, hostUid, sys.dir) : null;
    faultPoint("pool-park:files-made");
    const made = makeRunCgroup(r.limits);
    cg = made.cgroup;
    faultPoint("pool-park:cgroup-made");
    rec = writeStarting(itemDir, { ...rec, cgroup: cg });
    // §5.3 Named by the item from here on, the cgroup outlives this process: held from every stale
    // sweep until the item is claimed and released, evicted or reaped.
    holdRunCgroup(cg.dirs);
    // The sandbox `sbx run` builds for the same manifest (sandbox.ts startSandbox), with the waiter as
    // its command and the hand-off folder bound read-only at CLAIM_DIR.
    const argv = launchArgv(r, {
      argv: ["/bin/sh", "-c", WAITER, "sbx-pool-waiter"],
      binds: [{ host: c.ctl, inside: CLAIM_DIR, writable: false }],
      cgroups: cg.dirs,
      seccompFile: sys.seccomp,
      workspace: p.workspace,
      etc: view?.etc ?? sys.etc,
      mountpoint: mnt,
      ...(view ? { system: view.system } : {}),
      ...(view?.rootfs ? { rootfs: view.rootfs } : {}),
    });
    if (argv[0] !== LAUNCH_PATH) throw new RangeError("launcherArgv: unexpected program");
    const ready = openSync(c.ready, constants.O_RDONLY | constants.O_NONBLOCK);
    fds.push(ready);
    const files = [p.out, p.err, p.status].map((f) =>
      openSync(f, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600),
    );
    fds.push(...files);
    keeper = spawn("/bin/sh", ["-c", KEEPER, "sbx-pool-keeper", ...argv], {
      stdio: ["pipe", files[0], files[1], "ignore", "ignore", "ignore", files[2]],
      env: {},
      detached: true,
    });
    const kpid = keeper.pid;
    if (kpid === undefined) throw new HostError("SandboxFailed", "the keeper did not start");
    keeper.unref();
    const kstart = startTicks(kpid) ?? "";
    faultPoint("pool-park:keeper-started");
    rec = writeStarting(itemDir, { ...rec, keeper: { pid: kpid, start: kstart } });
    // Recorded: only now may the keeper start the launcher.
    keeper.stdin?.end("go\n");
    faultPoint("pool-park:launched");
    // Up: the waiter wrote "up" (every mount is final); never parked before that.
    const deadline = Date.now() + (o.readyMs ?? 10_000);
    let said = "";
    const buf = Buffer.alloc(16);
    while (!said.includes("\n")) {
      let n = 0;
      try {
        n = readSync(ready, buf, 0, buf.length, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
      }
      said += buf.subarray(0, n).toString("latin1");
      if (said.includes("\n")) break;
      if (statusField(p.status, "exit-code") !== null || startTicks(kpid) === null)
        throw new HostError("SandboxFailed", `the pooled sandbox ended while starting: ${tail(p.err)}`);
      if (Date.now() > deadline)
        throw new HostError("SandboxFailed", "the pooled sandbox did not come up in time");
      await sleep(5);
    }
    if (said !== "up\n") throw new HostError("SandboxFailed", "the waiter said something else than up");
    const unitPid = statusField(p.status, "child-pid");
    if (unitPid === null) throw new HostError("SandboxFailed", "bwrap reported no process");
    // Parked only once the waiter holds `go` open (the kernel lists it among its descriptors): from
    // then on the FIFO has a reader, frozen or not, so a claim's line is kept for it.
    const goId = statSync(c.go);
    while (!cg.dirs.flatMap(cgroupProcs).some((pid) => holds(pid, goId))) {
      if (Date.now() > deadline)
        throw new HostError("SandboxFailed", "the waiter did not reach its hand-off in time");
      await sleep(2);
    }
    const t = freezeTarget(cg.v2, cg.dirs);
    await freezeProcesses(t, cg.dirs);
    if (!(await frozenWithin(t)))
      throw new HostError("FreezeFailed", "the kernel does not report the sandbox frozen");
    faultPoint("pool-park:frozen");
    const info: ParkedInfo = {
      cgroup: cg,
      meter_cgroup: made.meter,
      keeper: { pid: kpid, start: kstart },
      unit_pid: unitPid,
      mountpoint: mnt,
      system: sys.dir,
      provided: providedFacts(r, o.imageRootfs ? { image: o.imageRootfs.hex } : {}),
      env: r.env,
      ...(o.imageRootfs ? { image: o.imageRootfs } : {}),
      parked_ms: Date.now(),
      cpu_us: readCgroupCpuUs(made.meter).toString(),
    };
    writeFileDurably(p.info, JSON.stringify(info) + "\n", 0o600);
    return info;
  } catch (e) {
    if (keeper?.pid !== undefined) killQuiet(keeper.pid);
    if (cg !== null) await removeRunCgroup(cg).catch(() => undefined);
    removeHostFiles(rec);
    disk.release();
    clearStarting(itemDir);
    throw e;
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/**
 * imageView (§14.9.5) is the system of a parked sandbox on `image`, kept in the item's system folder
 * `dir` (it outlives this process, as the generated /etc does): the image's /etc for `user`, its
 * top-level entries, and an empty mount point for the rootfs when the sandbox's uid cannot reach it.
 */
function imageView(image: ParkedImage, user: SandboxUser, uid: number, dir: string) {
  const etc = imageEtc(image.rootfs, user, SANDBOX_HOSTNAME, join(dir, "image-etc"));
  chmodSync(etc, 0o755);
  let rootfs: { source: string; mountpoint: string } | undefined;
  if (!reachable(image.rootfs, uid)) {
    rootfs = { source: image.rootfs, mountpoint: join(dir, "rootfs") };
    mkdirSync(rootfs.mountpoint, { mode: 0o755 });
  }
  return { etc, rootfs, system: rootfsEntries(image.rootfs, rootfs?.mountpoint ?? image.rootfs) };
}

/**
 * parkedSandboxOptions (§15.4, §8.2) are the options of the sandbox a parked item was built as (its
 * workspace, folder, user, env and system), so a claim resolves argv[0] in the sandbox it runs in.
 */
export function parkedSandboxOptions(itemDir: string, info: ParkedInfo): SandboxOptions {
  return {
    workspace: parkedPaths(itemDir).workspace,
    workspaceFolder: info.provided.workspaceFolder,
    user: info.provided.user.name,
    ...(info.env ? { env: info.env } : {}),
    ...(info.image ? { image: imageSystem(info.image.rootfs, info.image.tree, info.image.hex) } : {}),
  };
}

/** holds: whether process `pid` has a descriptor open on the file `f` (same device and inode). */
function holds(pid: number, f: { dev: number; ino: number }): boolean {
  const fds = `/proc/${String(pid)}/fd`;
  let names: string[];
  try {
    names = readdirSync(fds);
  } catch {
    return false;
  }
  return names.some((n) => {
    const st = statSync(join(fds, n), { throwIfNoEntry: false });
    return st !== undefined && st.dev === f.dev && st.ino === f.ino;
  });
}

function killQuiet(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

/** readParked reads an item's sandbox.json, or null when the item has no parked sandbox. */
export function readParked(itemDir: string): ParkedInfo | null {
  const f = parkedPaths(itemDir).info;
  if (!existsSync(f)) return null;
  return JSON.parse(readFileSync(f, "utf8")) as ParkedInfo;
}

/** writeParked records the CPU accounted so far. */
export function writeParked(itemDir: string, info: ParkedInfo): void {
  writeFileSync(parkedPaths(itemDir).info, JSON.stringify(info) + "\n", { mode: 0o600 });
}

/** parkedAlive: the keeper is the same process and the cgroup still holds the sandbox. */
export function parkedAlive(info: ParkedInfo): boolean {
  return (
    startTicks(info.keeper.pid) === info.keeper.start && info.cgroup.dirs.flatMap(cgroupProcs).length > 0
  );
}

/** parkedFrozen asks the kernel whether the parked sandbox is frozen now. */
export function parkedFrozen(info: ParkedInfo): boolean {
  return isFrozen(freezeTarget(info.cgroup.v2, info.cgroup.dirs));
}

/** parkedUsage reads what the parked sandbox holds: memory charged to its cgroup and its CPU µs. */
export function parkedUsage(info: ParkedInfo): { rss: bigint; cpu_us: bigint } | null {
  if (!parkedAlive(info)) return null;
  try {
    return { rss: residentBytes(info.cgroup.dirs) ?? 0n, cpu_us: readCgroupCpuUs(info.meter_cgroup) };
  } catch {
    return null;
  }
}

/**
 * destroyParked ends an item's sandbox (frozen or running): thawed so every process can take its
 * SIGKILL, the cgroup killed and removed, the keeper ended, the mountpoint removed. Idempotent.
 */
export async function destroyParked(itemDir: string): Promise<void> {
  const info = readParked(itemDir);
  if (info === null) return;
  try {
    await thawProcesses(freezeTarget(info.cgroup.v2, info.cgroup.dirs), 2000);
  } catch {
    // gone already, or the kill below reaches it anyway
  }
  await removeRunCgroup(info.cgroup).catch(() => undefined);
  if (startTicks(info.keeper.pid) === info.keeper.start) killQuiet(info.keeper.pid);
  removeHostFiles(info);
}

/**
 * killParkedNow ends an item's sandbox without waiting (an eviction, which is synchronous): the
 * cgroup thawed, the keeper and every process in the cgroup sent SIGKILL, the host's files of the
 * sandbox removed; its emptied cgroups are removed when they can be (else by a later sweep).
 */
export function killParkedNow(itemDir: string): void {
  const info = readParked(itemDir);
  if (info !== null) killSandboxNow(info);
}

/** A Readable that follows a file the sandbox writes, from its start, until `end()`. */
class Follower {
  readonly stream = new Readable({ read: () => undefined });
  private readonly fd: number;
  private pos = 0;
  private readonly buf = Buffer.alloc(64 * 1024);
  constructor(path: string) {
    this.fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  }
  drain(): void {
    for (;;) {
      const n = readSync(this.fd, this.buf, 0, this.buf.length, this.pos);
      if (n <= 0) return;
      this.pos += n;
      this.stream.push(Buffer.from(this.buf.subarray(0, n)));
    }
  }
  end(): void {
    this.drain();
    closeSync(this.fd);
    this.stream.push(null);
  }
}

/** What runUnit is handed for a claimed item: a started sandbox whose command waits for `proceed`. */
export type ClaimedSandbox = Omit<Sandbox, "child"> & {
  readonly child: { readonly stdin: null; readonly stdout: Readable; readonly stderr: Readable };
};

/**
 * claimSandbox (§15.4) hands a claimed item's parked sandbox to runUnit as the run's sandbox. The
 * unit's argv is written into `go` at once (the sandbox is still frozen: the line waits in the
 * FIFO); `proceed(true)`, which runUnit calls once its meter and journal are ready, thaws the
 * cgroup and the waiter execs the argv. `PoolItemLost` when the sandbox is gone, not frozen, or no
 * waiter reads `go` (the item was never fully parked, or it was tampered with): never a cold start.
 */
export function claimSandbox(itemDir: string, argv: readonly string[]): ClaimedSandbox {
  const info = readParked(itemDir);
  if (info === null) throw new HostError("PoolItemLost", `${itemDir} has no parked sandbox`);
  if (!parkedAlive(info)) throw new HostError("PoolItemLost", `the sandbox of ${itemDir} is gone`);
  const target = freezeTarget(info.cgroup.v2, info.cgroup.dirs);
  if (!isFrozen(target)) throw new HostError("PoolItemLost", `the sandbox of ${itemDir} is not frozen`);
  const p = { ...parkedPaths(itemDir), ...ctlPaths(info.system) };
  const line = Buffer.from(quoteArgv(argv) + "\n", "utf8");
  if (line.length > 65_536) throw new RangeError("the command line is over 64 KiB");
  // The waiter holds `go` open, so a non-blocking open for writing finds its reader (ENXIO: none,
  // the item is broken) and the line waits in the FIFO until the thaw.
  let go: number;
  try {
    go = openSync(p.go, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (e) {
    throw new HostError("PoolItemLost", `no waiter holds ${p.go}`, { cause: e });
  }
  try {
    if (!fstatSync(go).isFIFO()) throw new HostError("PoolItemLost", `${p.go} is not a FIFO`);
    // A FIFO holds 64 KiB: the whole line lands before the thaw.
    if (writeSync(go, line) !== line.length)
      throw new HostError("PoolItemLost", `${p.go} took part of the command line`);
  } finally {
    closeSync(go);
  }
  const out = new Follower(p.out);
  const err = new Follower(p.err);
  // Set by proceed (runUnit calls it once its meter and journal are ready).
  const st: { thawed: Promise<void> | null } = { thawed: null };
  const kill = () => killRunCgroup(info.cgroup).catch(() => undefined);
  const done = (async (): Promise<SandboxExit> => {
    let code: number | null = null;
    for (;;) {
      out.drain();
      err.drain();
      code = statusField(p.status, "exit-code");
      if (code !== null || info.cgroup.dirs.flatMap(cgroupProcs).length === 0) break;
      await sleep(st.thawed === null ? 20 : 5);
    }
    await st.thawed?.catch(() => undefined);
    const hits = limitHits(info.cgroup);
    await kill();
    out.end();
    err.end();
    const ws = info.provided.workspaceBytes;
    const disk = workspaceFull(p.workspace, ws) || workspaceBytes(p.workspace) > ws;
    writeBack(p.workspace);
    return { code, signal: null, started: true, setupFailed: false, hits: { ...hits, disk } };
  })();
  return {
    child: { stdin: null, stdout: out.stream, stderr: err.stream },
    meterCgroup: info.meter_cgroup,
    cgroup: info.cgroup,
    provided: info.provided,
    unitPid: Promise.resolve(info.unit_pid),
    done,
    release: async () => {
      await removeRunCgroup(info.cgroup);
      if (startTicks(info.keeper.pid) === info.keeper.start) killQuiet(info.keeper.pid);
      removeHostFiles(info);
    },
    ready: Promise.resolve(false),
    proceed(goOn) {
      if (st.thawed !== null) return;
      if (!goOn) {
        st.thawed = Promise.resolve();
        void kill();
        return;
      }
      st.thawed = thawProcesses(target).catch(async (e: unknown) => {
        await kill();
        throw e;
      });
    },
    signal(sig) {
      // As startSandbox does: a graceful stop spares bwrap's monitor (the keeper's child), which
      // would otherwise take the unit down with SIGKILL (--die-with-parent).
      for (const pid of new Set(info.cgroup.dirs.flatMap(cgroupProcs)))
        if (sig === "SIGKILL" || !isLauncher(pid, info.keeper.pid)) killQuietSig(pid, sig);
    },
  };
}

function isLauncher(pid: number, keeper: number): boolean {
  try {
    const s = readFileSync(`/proc/${String(pid)}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2).split(" ")[1] === String(keeper);
  } catch {
    return false;
  }
}

function killQuietSig(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone
  }
}
