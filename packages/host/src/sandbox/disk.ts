// §5.3 The workspace's size, bounded by the kernel as the unit writes. This host's filesystem has no
// project quotas, so for the sandbox's life the workspace is a filesystem of its own: a sparse ext4
// image, filled from the workspace (mke2fs -d), mounted over it in the host's mount namespace (so
// every host reader of the workspace path, snapshots included, sees what the unit wrote), with its
// reserved blocks set so that a user other than root can allocate no more than the bound. A write
// past it fails with ENOSPC inside. When the sandbox ends, the image is unmounted and its tree
// written back into the workspace directory; the image is removed only after that is on disk, so a
// crash at any point leaves the image beside the workspace, and the next sandbox on that workspace
// writes it back first (nothing the unit wrote is lost).
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  existsSync,
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
  unlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { HostError } from "../errors.ts";
import { diskBytesOf } from "./workspace.ts";

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

function run(file: string, args: readonly string[]): string {
  try {
    return execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const err = (e as { stderr?: string }).stderr ?? String(e);
    throw new HostError("DiskLimitUnavailable", `${file} ${args.join(" ")}: ${err.trim()}`, { cause: e });
  }
}

/** isMountPoint says whether `dir` is the root of a filesystem other than its parent's. */
export function isMountPoint(dir: string): boolean {
  const abs = resolve(dir);
  return statSync(abs).dev !== statSync(dirname(abs)).dev;
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

/** Longest wait for the image's last mount (the sandbox's own namespace) to go, in ms. */
const DETACH_WAIT_MS = 10_000;

/**
 * awaitDetached waits until no loop device is backed by `image`: the last mount of it (a sandbox's
 * namespace ends after its processes) has flushed and gone, so the image may be read. Refuses
 * `DiskLimitUnavailable` past DETACH_WAIT_MS (the image is kept; a later writeBack reads it).
 */
function awaitDetached(image: string): void {
  const deadline = Date.now() + DETACH_WAIT_MS;
  while (run("/usr/sbin/losetup", ["-j", image]).trim() !== "")
    if (Date.now() > deadline) throw new HostError("DiskLimitUnavailable", `${image} is still mounted`);
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
}

/**
 * staleMount says whether `ws` is a mount of `image` that no other mount namespace holds: its host
 * died after the sandbox did (SIGKILL, no write-back ran), so the image may be written back.
 */
function staleMount(ws: string, image: string): boolean {
  const dev = statSync(ws).dev;
  const id = `${String(Math.floor(dev / 256) & 0xfff)}:${String((dev & 0xff) | (Math.floor(dev / 4096) & 0xfff00))}`;
  if (!run("/usr/sbin/losetup", ["-j", image]).includes(":")) return false;
  const ours = readlinkSync("/proc/self/ns/mnt");
  const seen = new Set([ours]);
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n)))
    try {
      const ns = readlinkSync(`/proc/${pid}/ns/mnt`);
      if (seen.has(ns)) continue;
      seen.add(ns);
      const info = readFileSync(`/proc/${pid}/mountinfo`, "utf8");
      if (info.split("\n").some((l) => l.split(" ")[2] === id)) return false;
    } catch {
      // gone, or not ours to read
    }
  return true;
}

/**
 * writeBack (§5.3) unmounts the workspace's image where it is mounted, replaces the workspace
 * directory's tree with the image's, makes that durable, and only then removes the image.
 */
export function writeBack(ws: string): void {
  const image = diskImagePath(ws);
  if (isMountPoint(ws)) run("/usr/bin/umount", [ws]);
  if (!existsSync(image)) return;
  awaitDetached(image);
  const at = mkdtempSync(join(tmpdir(), "sbx-disk-"));
  try {
    run("/usr/bin/mount", ["-o", "loop,ro,nosuid,nodev,noexec", image, at]);
    try {
      for (const name of readdirSync(ws)) rmSync(join(ws, name), { recursive: true, force: true });
      run("/usr/bin/cp", ["-a", "--", `${at}/.`, `${ws}/`]);
      run("/usr/bin/sync", ["-f", ws]);
    } finally {
      run("/usr/bin/umount", [at]);
    }
  } finally {
    rmdirSync(at);
  }
  unlinkSync(image);
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
  if (isMountPoint(ws) && !staleMount(ws, image))
    throw new HostError("WorkspaceBusy", `workspace ${ws} is a mount point: another sandbox holds it`);
  if (existsSync(image)) writeBack(ws);
  const mode = statSync(ws).mode & 0o7777;
  const held = Number(diskBytesOf(ws));
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
    unlinkSync(image);
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
    full: () => {
      const s = statfsSync(ws);
      return isMountPoint(ws) && s.bavail * s.bsize < Math.min(FULL_BELOW_BYTES, bytes / 16);
    },
    release: () => {
      if (released) return;
      writeBack(ws);
      released = true;
    },
  };
}
