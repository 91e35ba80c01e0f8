// §8.2, §5.1, §14.9.5 The sandbox as its unit sees it, seen from the host: which host file a path
// inside names. argv[0] is resolved here the way execvp will resolve it inside (a name with a slash
// from the workspace folder, otherwise each directory of the sandbox's PATH), walking the path one
// component at a time over the sandbox's own mounts: the system (the image's rootfs when a manifest
// pins one, else the host's /usr and its top-level links), the workspace at its folder, and a
// grant's extra binds. A link is read, never followed on the host: its target is resolved again
// inside, where / is the sandbox's root, so an image's `/usr/bin/python3 -> python3.11` names the
// image's file, never the host's.
import { lstatSync, readlinkSync, type Stats } from "node:fs";
import { posix } from "node:path";
import { resolveSpec } from "../sandbox/plan.ts";
import type { SandboxOptions } from "../sandbox/sandbox.ts";
import { systemEntries, type SystemEntry } from "../sandbox/system.ts";

/** One mount of the view: a host directory (or file) shown at `inside`. */
interface Mount {
  readonly inside: string;
  readonly host: string;
}

/** A sandbox's filesystem as a list of mounts and top-level links, with its PATH and start folder. */
export interface SandboxView {
  readonly mounts: readonly Mount[];
  readonly links: ReadonlyMap<string, string>;
  /** The PATH the command starts with (the image's and the manifest's env, else the default). */
  readonly path: string;
  /** The workspace folder: where the command starts. */
  readonly folder: string;
  /** What the system is, for messages: "the image's rootfs" or "the host's /usr". */
  readonly system: string;
}

/** A program found inside: the host path of the file the kernel will map, or what was searched. */
export type FoundInside =
  { readonly path: string } | { readonly error: "ENOENT" | "EACCES"; readonly searched: readonly string[] };

/** Symbolic links followed at most, as the kernel's MAXSYMLINKS. */
const MAX_LINKS = 40;

/** sandboxView (§5.1, §14.9.5) is the view startSandbox builds for `so`: the same system entries and mounts. */
export function sandboxView(so: SandboxOptions): SandboxView {
  const r = resolveSpec(so);
  const system: readonly SystemEntry[] = so.image ? so.image.entries(so.image.rootfs) : systemEntries();
  const mounts: Mount[] = [];
  const links = new Map<string, string>();
  for (const e of system)
    if (e.kind === "symlink") links.set(e.path, e.target);
    else mounts.push({ inside: e.path, host: e.source ?? e.path });
  mounts.push({ inside: r.workspaceFolder, host: so.workspace });
  for (const b of so.binds ?? []) mounts.push({ inside: b.inside, host: b.host });
  return {
    mounts,
    links,
    path: r.env.PATH ?? "",
    folder: r.workspaceFolder,
    system: so.image ? `the image's rootfs` : "the host's /usr",
  };
}

// The mount that shows `inside` (the last one made wins, as in bwrap: later mounts cover earlier).
function mountOf(v: SandboxView, inside: string): string | null {
  let best: Mount | null = null;
  for (const m of v.mounts)
    if (inside === m.inside || inside.startsWith(m.inside === "/" ? "/" : `${m.inside}/`))
      if (best === null || m.inside.length >= best.inside.length) best = m;
  return best === null ? null : best.host + inside.slice(best.inside === "/" ? 0 : best.inside.length);
}

// A directory bwrap makes on its own root to hold a mount point below it (e.g. /workspaces for /workspaces/p).
function holdsMount(v: SandboxView, inside: string): boolean {
  return v.mounts.some((m) => m.inside.startsWith(`${inside}/`));
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/**
 * lookupInside (§8.2) returns the host path of what `path` (absolute, inside) names after every link
 * is resolved inside the view, or null when a component is missing, not a directory, outside every
 * mount, or the links loop (more than 40).
 */
export function lookupInside(v: SandboxView, path: string): { host: string; stat: Stats } | null {
  let todo = path.split("/");
  let cur = "";
  let links = 0;
  let last: { host: string; stat: Stats } | null = null;
  while (todo.length > 0) {
    const c = todo.shift() ?? "";
    if (c === "" || c === ".") continue;
    if (c === "..") {
      cur = posix.dirname(cur === "" ? "/" : cur);
      if (cur === "/") cur = "";
      last = null;
      continue;
    }
    if (last !== null && !last.stat.isDirectory()) return null;
    const next = `${cur}/${c}`;
    const top = v.links.get(next);
    const host = top === undefined ? mountOf(v, next) : null;
    const st = host === null ? null : lstatOrNull(host);
    let target: string;
    if (top !== undefined) target = top;
    else if (host !== null && st?.isSymbolicLink() === true) target = readlinkSync(host);
    else if (host !== null && st !== null) {
      cur = next;
      last = { host, stat: st };
      continue;
    } else if (holdsMount(v, next)) {
      cur = next;
      last = null;
      continue;
    } else return null;
    if (++links > MAX_LINKS) return null;
    todo = [...target.split("/"), ...todo];
    if (target.startsWith("/")) cur = "";
    last = null;
  }
  return last;
}

/**
 * findInside (§8.2) resolves `argv0` as execvp will inside the sandbox of `v`: a name with a slash
 * from the workspace folder, otherwise the first executable regular file of that name in a
 * directory of the view's PATH (relative PATH entries from the workspace folder). ENOENT when none
 * exists, EACCES when one exists but none is executable; `searched` lists the inside paths tried.
 */
export function findInside(v: SandboxView, argv0: string): FoundInside {
  const searched = argv0.includes("/")
    ? [posix.resolve(v.folder, argv0)]
    : v.path
        .split(":")
        .filter((d) => d !== "")
        .map((d) => posix.join(posix.resolve(v.folder, d), argv0));
  let exists = false;
  for (const p of searched) {
    const f = lookupInside(v, p);
    if (f === null || !f.stat.isFile()) continue;
    if ((f.stat.mode & 0o111) !== 0) return { path: f.host };
    exists = true;
  }
  return { error: exists ? "EACCES" : "ENOENT", searched };
}
