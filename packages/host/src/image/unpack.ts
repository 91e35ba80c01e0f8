// §14.9 Unpacking an image's layers, lowest first, into a fresh directory that becomes the unit's
// read-only system. Each layer is hashed as it is read and refused unless it is the blob its
// manifest names. Per layer, first its whiteouts remove what lower layers made (`.wh.NAME` one
// name, `.wh..wh..opq` every child of its directory), then its other entries are written. Nothing is
// ever written through a link: every parent of an entry must be a real directory made by the
// unpack itself. Refused with a code: an absolute name (`LayerAbsolutePath`); a `..` component or a
// parent that is a link (`LayerPathEscapes`); a symbolic link whose relative target climbs above
// the root, or a hard link to a name outside the root or to nothing unpacked (`LayerLinkEscapes`);
// a FIFO (`LayerDeviceNode`). Character and block devices are skipped and listed (every distribution
// rootfs carries /dev/console and the like; the sandbox's /dev is its own, and a node made anywhere
// else could only open a host device), as setuid and setgid bits are stripped (the sandbox sets
// no_new_privs anyway; §14.9.3 says so). Every file is owned by the host's root; the tar's owners are
// not applied.
import {
  chmodSync,
  closeSync,
  fchmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeSync,
  type Stats,
} from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";
import { PATH_MAX, walkTar, type EntrySink, type TarEntry } from "./archive.ts";
import { IMAGE_LIMITS, type Descriptor, type ImageLimits } from "./oci.ts";
import { sha256File, type ImageStore } from "./store.ts";

/** What an unpack made and changed. */
export interface UnpackStats {
  entries: number;
  whiteouts: number;
  /** Files whose setuid or setgid bit was stripped. */
  stripped: number;
  /** Character and block devices skipped, by entry name (layer order). */
  skipped: string[];
}

const WH = ".wh.";
const OPAQUE = ".wh..wh..opq";

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/** namePartsOf splits an entry name into components; refuses absolute names and `..` (§14.9). */
export function namePartsOf(name: string): string[] {
  if (name.startsWith("/"))
    throw new HostError("LayerAbsolutePath", `layer entry ${JSON.stringify(name)} is absolute`);
  const parts = name.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes(".."))
    throw new HostError("LayerPathEscapes", `layer entry ${JSON.stringify(name)} has a .. component`);
  return parts;
}

/** linkEscapes says whether a relative symlink target, seen from directory `dirParts`, climbs above the root. */
export function linkEscapes(dirParts: readonly string[], target: string): boolean {
  if (target.startsWith("/")) return false;
  let depth = dirParts.length;
  for (const c of target.split("/"))
    if (c === "..") {
      if (--depth < 0) return true;
    } else if (c !== "" && c !== ".") depth++;
  return false;
}

class Unpacker {
  readonly stats: UnpackStats = { entries: 0, whiteouts: 0, stripped: 0, skipped: [] };
  /** The layer being applied, as its refusals name it. */
  layer = "";
  /** Directory modes, applied at the end (a read-only directory could not be filled). */
  private readonly dirModes = new Map<string, number>();

  constructor(private readonly root: string) {}

  /** parent makes sure every parent of `parts` is a real directory (made if missing) and returns the path. */
  private parent(parts: readonly string[], name: string, create: boolean): string | null {
    let p = this.root;
    for (const c of parts.slice(0, -1)) {
      p = join(p, c);
      const st = lstatOrNull(p);
      if (st === null) {
        if (!create) return null;
        mkdirSync(p, { mode: 0o755 });
      } else if (st.isSymbolicLink())
        throw new HostError(
          "LayerPathEscapes",
          `layer entry ${JSON.stringify(name)} goes through the link ${c}`,
        );
      else if (!st.isDirectory())
        throw new HostError("ImageInvalid", `layer entry ${JSON.stringify(name)}: ${c} is not a directory`);
    }
    return p;
  }

  whiteout(e: TarEntry): void {
    const parts = namePartsOf(e.path);
    const base = parts[parts.length - 1] ?? "";
    if (!base.startsWith(WH)) return;
    this.stats.whiteouts++;
    const dir = this.parent(parts, e.path, false);
    if (dir === null) return;
    if (base === OPAQUE) {
      for (const child of readdirSync(dir)) this.remove(join(dir, child));
      return;
    }
    if (base.startsWith(`${WH}${WH}`)) return; // other AUFS metadata: nothing to remove
    const name = base.slice(WH.length);
    if (name === "" || name === "." || name === "..")
      throw new HostError("LayerPathEscapes", `whiteout ${e.path}`);
    this.remove(join(dir, name));
  }

  /** remove deletes a tree (never following a link) and forgets the modes recorded inside it. */
  private remove(path: string): void {
    rmSync(path, { recursive: true, force: true });
    for (const p of this.dirModes.keys()) if (p === path || p.startsWith(`${path}/`)) this.dirModes.delete(p);
  }

  entry(e: TarEntry): EntrySink | null {
    const parts = namePartsOf(e.path);
    const base = parts[parts.length - 1];
    if (base === undefined || base.startsWith(WH)) return null;
    this.stats.entries++;
    if (Buffer.byteLength(join(this.root, ...parts)) > PATH_MAX)
      throw new HostError(
        "ImageInvalid",
        `${this.layer}: entry ${JSON.stringify(e.path.slice(0, 80))}… is too long a path to unpack`,
      );
    const path = join(this.parent(parts, e.path, true) ?? this.root, base);
    const old = lstatOrNull(path);
    if (e.type === "Directory") {
      if (old === null || !old.isDirectory()) {
        if (old !== null) this.remove(path);
        mkdirSync(path, { mode: 0o700 });
      }
      this.dirModes.set(path, this.mode(e.mode));
      return null;
    }
    if (old !== null) this.remove(path);
    switch (e.type) {
      case "File":
      case "OldFile":
      case "ContiguousFile":
        return this.file(path, e.mode);
      case "SymbolicLink":
        if (linkEscapes(parts.slice(0, -1), e.linkpath))
          throw new HostError(
            "LayerLinkEscapes",
            `symlink ${e.path} -> ${e.linkpath} points outside the root`,
          );
        symlinkSync(e.linkpath, path);
        return null;
      case "Link":
        this.hardLink(e, path);
        return null;
      case "CharacterDevice":
      case "BlockDevice":
        this.stats.skipped.push(e.path);
        return null;
      case "FIFO":
        throw new HostError("LayerDeviceNode", `${this.layer}: entry ${e.path} is a ${e.type}`);
      default:
        throw new HostError("ImageInvalid", `layer entry ${e.path} has the unsupported type ${e.type}`);
    }
  }

  private mode(m: number): number {
    if ((m & 0o6000) !== 0) this.stats.stripped++;
    return m & 0o1777;
  }

  private file(path: string, mode: number): EntrySink {
    const fd = openSync(path, "wx", 0o600);
    const m = this.mode(mode) & 0o777;
    return {
      data: (c) => writeSync(fd, c),
      end: () => {
        fchmodSync(fd, m);
        closeSync(fd);
      },
    };
  }

  private hardLink(e: TarEntry, path: string): void {
    let parts: string[];
    try {
      parts = namePartsOf(e.linkpath);
    } catch {
      throw new HostError("LayerLinkEscapes", `hard link ${e.path} -> ${e.linkpath} points outside the root`);
    }
    const dir = parts.length === 0 ? null : this.parent(parts, e.linkpath, false);
    const target = dir === null ? null : join(dir, parts[parts.length - 1] ?? "");
    const st = target === null ? null : lstatOrNull(target);
    if (target === null || st === null || st.isDirectory())
      throw new HostError("LayerLinkEscapes", `hard link ${e.path} -> ${e.linkpath} names nothing unpacked`);
    linkSync(target, path);
  }

  /** finish applies the directories' modes, deepest first. */
  finish(): void {
    // Every recorded directory is still the one the unpack made (removals forget theirs), under
    // parents that are real directories; checked again, never followed.
    const dirs = [...this.dirModes].sort(([a], [b]) => b.length - a.length);
    for (const [p, m] of dirs) if (lstatOrNull(p)?.isDirectory() === true) chmodSync(p, m);
    chmodSync(this.root, 0o755);
  }
}

/**
 * unpackLayers (§14.9) unpacks `layers` (lowest first) from `store` into the empty directory `dest`.
 * Refuses: `ImageNotInStore` (a layer missing), `ImageDigestMismatch` (a layer's bytes are not its
 * digest: hashed before anything of it is applied),
 * `LayerAbsolutePath`, `LayerPathEscapes`, `LayerLinkEscapes`, `LayerDeviceNode` (a FIFO, naming the
 * image `image` and the layer), `ImageInvalid`. Character and block devices are skipped and listed.
 * `ImageTooLarge`: a layer's tar stream over `limits.maxLayerBytes`, or the layers together over
 * `limits.maxImageBytes`, stopped there. On a refusal `dest` holds a partial tree the caller removes.
 */
export function unpackLayers(
  store: ImageStore,
  layers: readonly Descriptor[],
  dest: string,
  image = "",
  limits: ImageLimits = IMAGE_LIMITS,
): UnpackStats {
  const u = new Unpacker(dest);
  let used = 0;
  for (const l of layers) {
    u.layer = `${image === "" ? "" : `image sha256:${image} `}layer sha256:${l.hex}`;
    const path = store.blobPath(l.hex);
    if (lstatOrNull(path) === null)
      throw new HostError("ImageNotInStore", `layer sha256:${l.hex} is not in the store`);
    const got = sha256File(path);
    if (got !== l.hex)
      throw new HostError("ImageDigestMismatch", `layer sha256:${l.hex} hashes to sha256:${got}`);
    const whiteouts: TarEntry[] = [];
    const what = `${image === "" ? "" : `image sha256:${image} `}layer sha256:${l.hex}`;
    // Bounded by the layer's bound and what the image's bound leaves (§14.9.1).
    const maxBytes = Math.min(limits.maxLayerBytes, limits.maxImageBytes - used);
    walkTar(
      path,
      what,
      (e) => {
        const parts = namePartsOf(e.path);
        if ((parts[parts.length - 1] ?? "").startsWith(WH)) whiteouts.push(e);
        return null;
      },
      { maxBytes },
    );
    for (const w of whiteouts) u.whiteout(w);
    used += walkTar(path, what, (e) => u.entry(e), { maxBytes });
  }
  u.finish();
  return u.stats;
}
