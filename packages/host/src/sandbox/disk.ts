// §5.3 The workspace's size, bounded by the kernel as the unit writes. This host's filesystem has no
// project quotas, so for the sandbox's life the workspace is a filesystem of its own: a sparse ext4
// image, filled from the workspace (mke2fs -d), mounted over it in the host's mount namespace (so
// every host reader of the workspace path, snapshots included, sees what the unit wrote), with its
// reserved blocks set so that a user other than root can allocate no more than the bound. A write
// past it fails with ENOSPC inside. When the sandbox ends, the image is unmounted and its tree
// written back into the workspace directory; the image is removed only after that is on disk, so a
// crash at any point leaves the image beside the workspace, and the next sandbox on that workspace
// writes it back first (nothing the unit wrote is lost).
import { execFileSync, type StdioOptions } from "node:child_process";
import {
  chmodSync,
  closeSync,
  existsSync,
  fstatSync,
  lstatSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  statfsSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { HostError } from "../errors.ts";
import { diskBytesOf } from "./workspace.ts";
import { openRoot, replaceTreeAt } from "../fsat/index.ts";

/** Room for the filesystem's own structures (inode tables, journal, directories) beyond the bound. */
const IMAGE_SLACK_BYTES = 24 << 20;
/** Free space below which the bound counts as reached (a write there failed with ENOSPC): 1 MiB, or a sixteenth of a smaller bound. */
const FULL_BELOW_BYTES = 1 << 20;

/** A workspace mounted on its own bounded filesystem for one sandbox's life. */
export interface BoundWorkspace {
  /** The image file beside the workspace (removed once written back). */
  readonly image: string;
  /** True when the workspace's filesystem is (nearly) full: the unit ran into the bound. */
  full(): boolean;
  /** Unmounts the image, writes its tree back into the workspace, then removes it. Idempotent. */
  release(): void;
}

/** diskImagePath (§5.3): where the bounded image of workspace `ws` lives: `.NAME.sbx-disk` beside it. */
export function diskImagePath(ws: string): string {
  const abs = resolve(ws);
  return join(dirname(abs), `.${basename(abs)}.sbx-disk`);
}

function run(file: string, args: readonly string[], fd3?: number): string {
  try {
    const stdio: StdioOptions =
      fd3 === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", "pipe", "pipe", fd3];
    return execFileSync(file, args, { encoding: "utf8", stdio });
  } catch (e) {
    const err = (e as { stderr?: string }).stderr ?? String(e);
    throw new HostError("DiskLimitUnavailable", `${file} ${args.join(" ")}: ${err.trim()}`, { cause: e });
  }
}

/** isMountPoint says whether `dir` is the root of a filesystem other than its parent's. */
export function isMountPoint(dir: string): boolean {
  const abs = resolve(dir);
  return lstatSync(abs).dev !== statSync(dirname(abs)).dev;
}

/** superblock reads the image's block size, block count and free blocks (dumpe2fs -h). */
function superblock(image: string): { size: number; count: number; free: number } {
  const text = run("/usr/sbin/dumpe2fs", ["-h", image]);
  const field = (name: string): number => {
    const line = text.split("\n").find((l) => l.startsWith(`${name}:`));
    const n = Number(line?.slice(name.length + 1).trim());
    if (!Number.isSafeInteger(n)) throw new HostError("DiskLimitUnavailable", `dumpe2fs: no ${name}`);
    return n;
  };
  return { size: field("Block size"), count: field("Block count"), free: field("Free blocks") };
}

/**
 * inUse says whether a sandbox uses the filesystem on loop device `source`: some other mount
 * namespace mounts it somewhere other than at `ws`. (Every sandbox whose launcher made a mount
 * namespace while `ws` was mounted holds an idle copy of that mount at `ws` itself; the sandbox
 * that works in it has it at its workspace folder or the launcher's bind point.)
 */
function inUse(source: string, ws: string): boolean {
  const seen = new Set([readlinkSync("/proc/self/ns/mnt")]);
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n)))
    try {
      const ns = readlinkSync(`/proc/${pid}/ns/mnt`);
      if (seen.has(ns)) continue;
      seen.add(ns);
      for (const l of readFileSync(`/proc/${pid}/mountinfo`, "utf8").split("\n"))
        if (l.split(" - ")[1]?.split(" ")[1] === source && l.split(" ")[4] !== resolve(ws)) return true;
    } catch {
      // gone, or not ours to read
    }
  return false;
}

/** imageLoop names the loop device of `ws`'s image when that image is what is mounted on `ws`, else "". */
function imageLoop(ws: string): string {
  const image = diskImagePath(ws);
  if (!existsSync(image) || !isMountPoint(ws)) return "";
  const dev = lstatSync(ws).dev;
  for (const line of run("/usr/sbin/losetup", ["-j", image]).split("\n")) {
    const loop = line.split(":")[0] ?? "";
    if (loop !== "" && statSync(loop).rdev === dev) return loop;
  }
  return "";
}

/**
 * locked runs `f` holding an exclusive flock on the workspace's parent directory, so two write-backs
 * of one workspace (its sandbox's host and a later command that found it left) run one after the
 * other, and the second finds nothing to do. Node has no flock: flock(1) takes the lock on the
 * directory's open file description, which it shares with the descriptor held here (its fd 3), and
 * the lock lasts until that descriptor is closed.
 */
function locked(ws: string, f: () => void): void {
  const fd = openSync(dirname(ws), "r");
  try {
    run("/usr/bin/flock", ["--exclusive", "3"], fd);
    f();
  } finally {
    closeSync(fd);
  }
}

/** A filesystem sync of the filesystem holding `dir` (sync -f: syncfs). */
function syncFs(dir: string): void {
  run("/usr/bin/sync", ["-f", dir]);
}

/**
 * detachedRoot opens the root of the filesystem mounted on `dir`, then detaches it from the host's
 * mount namespace (umount -l): the descriptor keeps it readable, nothing is left mounted on `dir`
 * if this process dies, and `dir` is the directory underneath again.
 */
function detachedRoot(dir: string): number {
  const fd = openRoot(dir);
  try {
    run("/usr/bin/umount", ["-l", dir]);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return fd;
}

/**
 * writeBack (§5.3) replaces the workspace directory's tree with its image's, makes that durable,
 * and only then removes the image. An image mounted on the workspace is synced, its root opened and
 * the mount detached, so it is read where it was mounted (other sandboxes' namespaces may hold idle
 * copies of the mount: it is never mounted a second time) and the directory underneath is the
 * workspace path again; an image left unmounted by a crash is mounted read-only, aside, to be read.
 * The copy is relative to open descriptors (fsat replaceTreeAt), so a tree deeper than PATH_MAX is
 * written back whole. Nothing to do when there is no image, or when another write-back has just
 * done it (under the lock).
 */
export function writeBack(ws: string): void {
  const abs = resolve(ws);
  const image = diskImagePath(abs);
  locked(abs, () => {
    let src: number;
    if (imageLoop(abs) !== "") {
      syncFs(abs);
      src = detachedRoot(abs);
    } else if (existsSync(image)) {
      const at = mkdtempSync(join(tmpdir(), "sbx-writeback-"));
      try {
        run("/usr/bin/mount", ["-o", "loop,ro,nosuid,nodev,noexec", image, at]);
        src = detachedRoot(at);
      } finally {
        rmdirSync(at);
      }
    } else return;
    try {
      const dst = openRoot(abs);
      try {
        if (fstatSync(dst).dev === fstatSync(src).dev)
          throw new HostError("DiskLimitUnavailable", `workspace ${abs} is still its image's mount`);
        replaceTreeAt(src, dst);
      } finally {
        closeSync(dst);
      }
      syncFs(dirname(abs));
    } finally {
      closeSync(src);
    }
    rmSync(image, { force: true });
  });
}

/**
 * workspaceFull (§5.3) says whether workspace `ws`, bounded at `bytes`, is on its own filesystem and
 * (nearly) full: the unit ran into the bound (a write of its failed with ENOSPC).
 */
export function workspaceFull(ws: string, bytes: number): boolean {
  if (imageLoop(ws) === "") return false;
  const s = statfsSync(ws);
  return s.bavail * s.bsize < Math.min(FULL_BELOW_BYTES, bytes / 16);
}

/**
 * detachWorkspace (§5.3) drops a throwaway workspace's bounded filesystem without writing it back
 * (a pool item's, removed with its item): unmounted lazily (a sandbox that still holds it keeps it
 * until it ends), the image removed.
 */
export function detachWorkspace(ws: string): void {
  if (existsSync(ws) && imageLoop(ws) !== "") run("/usr/bin/umount", ["-l", ws]);
  rmSync(diskImagePath(ws), { force: true });
}

/**
 * recoverWorkspace (§5.3) writes back an image a crash left on workspace `ws` (mounted, with no
 * sandbox using it, after its host process was killed; or unmounted, after a reboot), so the
 * directory holds what the unit wrote. Refuses `WorkspaceBusy` when a live sandbox uses it.
 */
export function recoverWorkspace(ws: string): void {
  const loop = imageLoop(ws);
  if (loop !== "" && inUse(loop, ws))
    throw new HostError("WorkspaceBusy", `workspace ${ws} is in use by another sandbox`);
  if (existsSync(diskImagePath(ws))) writeBack(ws);
}

/**
 * boundWorkspace (§5.3) puts workspace `ws` on a filesystem of its own where users other than root
 * can allocate at most `bytes` in all (what it already holds counts), owned by host uid `uid`.
 * An image left by a crash is written back first. Refuses `WorkspaceBusy` when the workspace is a
 * mount point already (another sandbox has it), `DiskLimitUnavailable` when the image cannot be
 * made or mounted: the sandbox never runs unbounded.
 */
export function boundWorkspace(ws: string, bytes: number, uid: number): BoundWorkspace {
  if (!Number.isSafeInteger(bytes) || bytes <= 0)
    throw new RangeError("the disk bound must be a positive integer");
  const image = diskImagePath(ws);
  recoverWorkspace(ws);
  // Its own directory is reached under the image's mount by a bind of its parent (writeBack).
  if (isMountPoint(ws))
    throw new HostError("DiskLimitUnavailable", `workspace ${ws} is a mount point: give a directory in one`);
  const mode = statSync(ws).mode & 0o7777;
  const held = diskBytesOf(ws);
  // Written back, the tree is held twice for a moment (image and directory): both must fit.
  const host = statfsSync(dirname(image));
  if (host.bavail * host.bsize < 2 * (bytes + held))
    throw new HostError(
      "DiskLimitUnavailable",
      `the host has ${String(host.bavail * host.bsize)} bytes free; a workspace bound of ${String(bytes)} needs twice that and what the workspace holds`,
    );
  const fd = openSync(image, "wx", 0o600);
  try {
    ftruncateSync(fd, bytes + held + IMAGE_SLACK_BYTES + Math.floor(bytes / 16));
  } finally {
    closeSync(fd);
  }
  try {
    run("/usr/sbin/mke2fs", [
      "-q",
      "-F",
      "-t",
      "ext4",
      "-m",
      "0",
      "-E",
      `root_owner=${uid}:${uid},lazy_journal_init=1`,
      "-d",
      ws,
      image,
    ]);
    const sb = superblock(image);
    // ext4 keeps back min(2 %, 4096) blocks of its own from every user (delayed allocation's
    // reserve): left to the unit on top, so the bound it can fill is the one stated.
    const kept = Math.min(Math.floor(sb.count / 50), 4096);
    const avail = Math.ceil(Math.max(0, bytes - held) / sb.size) + kept;
    // debugfs, not tune2fs: tune2fs refuses a reserve over half the filesystem, a small bound's is more.
    run("/usr/sbin/debugfs", [
      "-w",
      "-R",
      `ssv r_blocks_count ${String(Math.max(0, sb.free - avail))}`,
      image,
    ]);
    run("/usr/bin/mount", ["-o", "loop,nosuid,nodev,noatime", image, ws]);
  } catch (e) {
    rmSync(image, { force: true });
    throw e;
  }
  try {
    // mke2fs makes lost+found; it is no part of the workspace (one the workspace had is kept).
    if (readdirSync(join(ws, "lost+found")).length === 0) rmdirSync(join(ws, "lost+found"));
    chmodSync(ws, mode);
  } catch (e) {
    writeBack(ws);
    throw new HostError("DiskLimitUnavailable", `workspace ${ws}: ${String(e)}`, { cause: e });
  }
  let released = false;
  return {
    image,
    full: () => workspaceFull(ws, bytes),
    release: () => {
      if (released) return;
      writeBack(ws);
      released = true;
    },
  };
}
