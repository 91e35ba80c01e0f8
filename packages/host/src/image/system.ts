// §14.9 The system a unit sees when its manifest names an image: every top-level entry of the
// image's rootfs, read-only, in place of the host's /usr and its links, except /etc, /proc, /dev,
// /tmp and /sys, which the sandbox makes itself. /etc is the image's own, copied, with the files
// that name the sandbox's users and host (passwd, group, hosts, hostname, resolv.conf) generated
// over it: the image's users are kept, except one with the unit's name or uid, which is replaced.
import {
  chmodSync,
  cpSync,
  mkdirSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { etcFiles, type SandboxUser, type SystemEntry } from "../sandbox/system.ts";

/** Top-level names of the rootfs the sandbox provides itself. */
const OWN = new Set(["etc", "proc", "dev", "tmp", "sys"]);
const MAX_ID_FILE = 1 << 20;

/** What startSandbox needs to show an image as the system (SandboxOptions.image). */
export interface ImageSystem {
  /** The host directory of the verified rootfs. */
  readonly rootfs: string;
  /** The sha256 hex of the image manifest the rootfs was unpacked from (what the sandbox is built from). */
  readonly hex: string;
  /** The system entries, with bind sources under `mount` (where the rootfs is reachable). */
  entries(mount: string): SystemEntry[];
  /** A host directory holding the /etc the sandbox binds, for this user. */
  etc(user: SandboxUser, hostname: string): string;
}

/**
 * rootfsEntries (§14.9) lists the top-level entries of `rootfs` as system entries: a link is the same
 * link inside (its target is read in the sandbox, where / is the image's root); a directory or file
 * is bound read-only from `mount`/name. Other kinds are left out.
 */
export function rootfsEntries(rootfs: string, mount: string): SystemEntry[] {
  const out: SystemEntry[] = [];
  for (const name of readdirSync(rootfs).sort()) {
    if (OWN.has(name)) continue;
    const st = lstatSync(join(rootfs, name));
    if (st.isSymbolicLink())
      out.push({ kind: "symlink", target: readlinkSync(join(rootfs, name)), path: `/${name}` });
    else if (st.isDirectory() || st.isFile())
      out.push({ kind: "ro-bind", source: join(mount, name), path: `/${name}` });
  }
  return out;
}

// The image's own passwd or group file, when it is a plain file (never read through a link).
function idFile(rootfs: string, name: string): string[] {
  const p = join(rootfs, "etc", name);
  try {
    const st = lstatSync(p);
    if (!st.isFile() || st.size > MAX_ID_FILE) return [];
    return readFileSync(p, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "");
  } catch {
    return [];
  }
}

// Lines of the image's file kept beside the generated ones: none naming the same name or id.
function merge(image: readonly string[], generated: string, idField: number): string {
  const ours = generated.split("\n").filter((l) => l !== "");
  const taken = new Set(ours.map((l) => l.split(":")[0]));
  const ids = new Set(ours.map((l) => l.split(":")[idField]));
  const kept = image.filter((l) => !taken.has(l.split(":")[0]) && !ids.has(l.split(":")[idField]));
  return [...ours, ...kept].join("\n") + "\n";
}

/**
 * imageEtc (§14.9) writes the /etc of a sandbox on `rootfs` into a fresh host directory: the image's
 * /etc copied (links as links, never followed), then passwd and group merged with the sandbox's
 * users, and hosts, hostname and resolv.conf generated (each removed first, so a link the image put
 * there is replaced, never written through).
 */
export function imageEtc(rootfs: string, user: SandboxUser, hostname: string, into?: string): string {
  const dir = into ?? mkdtempSync(join(tmpdir(), "sbx-image-etc-"));
  if (into !== undefined) mkdirSync(into, { mode: 0o700 });
  const src = join(rootfs, "etc");
  let isDir = false;
  try {
    isDir = lstatSync(src).isDirectory();
  } catch {
    isDir = false;
  }
  if (isDir) cpSync(src, dir, { recursive: true, verbatimSymlinks: true, dereference: false, force: true });
  const gen = etcFiles(user, hostname);
  const files: Record<string, string> = {
    ...gen,
    passwd: merge(idFile(rootfs, "passwd"), gen.passwd ?? "", 2),
    group: merge(idFile(rootfs, "group"), gen.group ?? "", 2),
  };
  for (const [name, text] of Object.entries(files)) {
    rmSync(join(dir, name), { recursive: true, force: true });
    writeFileSync(join(dir, name), text, { mode: 0o644, flag: "wx" });
  }
  chmodSync(dir, 0o755);
  return dir;
}

const etcCache = new Map<string, string>();
let exitHook = false;

/**
 * imageSystem (§14.9) is the ImageSystem of a verified rootfs (`tree`: its digest) of image `hex`;
 * each /etc is made once per process for each tree and user.
 */
export function imageSystem(rootfs: string, tree: string, hex: string): ImageSystem {
  return {
    rootfs,
    hex,
    entries: (mount) => rootfsEntries(rootfs, mount),
    etc(user, hostname) {
      const key = JSON.stringify([rootfs, tree, user, hostname]);
      const have = etcCache.get(key);
      if (have !== undefined) return have;
      const dir = imageEtc(rootfs, user, hostname);
      etcCache.set(key, dir);
      if (!exitHook) {
        exitHook = true;
        process.once("exit", () => {
          for (const d of etcCache.values()) rmSync(d, { recursive: true, force: true });
        });
      }
      return dir;
    },
  };
}
