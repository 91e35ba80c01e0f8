// §5.1, §5.4 The system a sandbox sees when no image is named: the host's /usr read-only, the usual
// top-level links into it (as the host has them), and a generated /etc that names only the
// sandbox's own users. Nothing else of the host's /etc is visible.
import { chmodSync, lstatSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The user a unit runs as inside the sandbox (§5.4): its name and uid/gid there. */
export interface SandboxUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** The default user: `unit`, uid and gid 1000. */
export const DEFAULT_USER: SandboxUser = { name: "unit", uid: 1000, gid: 1000 };

/**
 * sandboxUser (§5.4) maps a manifest's `remoteUser`/`containerUser` to a user inside: `root` is uid
 * 0 there (never on the host: the sandbox maps it onto an unprivileged host uid); any other valid
 * name is uid 1000. Refuses a name that is not a portable user name (RangeError).
 */
export function sandboxUser(name: string | undefined): SandboxUser {
  if (name === undefined) return DEFAULT_USER;
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(name))
    throw new RangeError(`sandbox user ${JSON.stringify(name)} is not a valid name`);
  return name === "root" ? { name, uid: 0, gid: 0 } : { name, uid: 1000, gid: 1000 };
}

/** The top-level names that distributions link into /usr (merged /usr) or keep as directories. */
const TOP_LEVEL = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] as const;

/**
 * One entry of the read-only system: a link to make, or a host directory to bind read-only (at the
 * same path, or from `source`: an image's rootfs, §14.9).
 */
export type SystemEntry =
  | { readonly kind: "symlink"; readonly target: string; readonly path: string }
  | { readonly kind: "ro-bind"; readonly path: string; readonly source?: string };

/**
 * systemEntries (§5.1) lists what the system view holds besides /usr, following the host: a
 * top-level link into usr/ is the same link inside; a real directory is bound read-only; a name the
 * host does not have is left out. A link elsewhere is left out too (it would name another host path).
 */
export function systemEntries(root = "/"): SystemEntry[] {
  const out: SystemEntry[] = [{ kind: "ro-bind", path: "/usr" }];
  for (const name of TOP_LEVEL) {
    const p = join(root, name);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) {
      const target = readlinkSync(p);
      if (/^\/?usr\/[A-Za-z0-9_.-]+$/.test(target)) out.push({ kind: "symlink", target, path: `/${name}` });
    } else if (st.isDirectory()) out.push({ kind: "ro-bind", path: `/${name}` });
  }
  return out;
}

/** The generated /etc: file name → content. */
export function etcFiles(user: SandboxUser, hostname: string): Record<string, string> {
  const users = [
    "root:x:0:0:root:/root:/usr/sbin/nologin",
    ...(user.uid === 0 ? [] : [`${user.name}:x:${user.uid}:${user.gid}::/tmp:/bin/sh`]),
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
  ];
  const groups = [
    "root:x:0:",
    ...(user.gid === 0 ? [] : [`${user.name}:x:${user.gid}:`]),
    "nogroup:x:65534:",
  ];
  return {
    passwd: users.join("\n") + "\n",
    group: groups.join("\n") + "\n",
    hosts: `127.0.0.1\tlocalhost ${hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\n`,
    // No network (§5.2): no name server either.
    "resolv.conf": "# this sandbox has no network (sandbox-attest §5.2)\n",
    hostname: `${hostname}\n`,
  };
}

/**
 * writeEtc (§5.4) writes the generated /etc into a fresh host directory (mode 0755, files 0644) and
 * returns it with a remover; the sandbox binds it read-only at /etc.
 */
export function writeEtc(user: SandboxUser, hostname: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "sbx-etc-"));
  for (const [name, text] of Object.entries(etcFiles(user, hostname)))
    writeFileSync(join(dir, name), text, { mode: 0o644 });
  chmodSync(dir, 0o755);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const cached = new Map<string, string>();
let exitHook = false;

/**
 * sharedSystemDir (§5.4) returns a host directory holding `files` (mode 0755, files 0644), made once
 * per process for each distinct content and removed when the process exits. Sandboxes bind it
 * read-only, so one copy serves every run that sees the same /etc (or seccomp program).
 */
export function sharedSystemDir(files: Readonly<Record<string, string | Buffer>>): string {
  const key = JSON.stringify(Object.entries(files).map(([k, v]) => [k, Buffer.from(v).toString("base64")]));
  const have = cached.get(key);
  if (have !== undefined) return have;
  const dir = mkdtempSync(join(tmpdir(), "sbx-system-"));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body, { mode: 0o644 });
  chmodSync(dir, 0o755);
  cached.set(key, dir);
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const d of cached.values()) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}
