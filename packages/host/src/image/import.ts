// §14.9 Importing an image into the store from an OCI image layout (a directory, or a tar of one:
// an OCI archive, which is also what `docker save` writes since Docker 25) or a classic `docker
// save` archive (manifest.json, <id>.json configs, <id>/layer.tar). Every blob is hashed on the way
// in and refused unless it hashes to the digest that names it (`ImageDigestMismatch`); a classic
// archive's layers are checked against the config's `rootfs.diff_ids`, and the store records an OCI
// image manifest built from them.
import {
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join, posix } from "node:path";
import type { Json } from "@sbx/wire";
import { HostError } from "../errors.ts";
import { walkTar } from "./archive.ts";
import {
  hostPlatform,
  IMAGE_LIMITS,
  isIndex,
  isManifest,
  MAX_JSON_BLOB,
  MEDIA,
  parseIndex,
  parseJsonBlob,
  parseManifest,
  type Descriptor,
  type ImageLimits,
} from "./oci.ts";
import { parseRef, sha256File, type ImageRef, type ImageStore, type StoredImage } from "./store.ts";

/** Files of the thing imported, by their path inside it. */
interface Source {
  /** The host path holding the file at `path` inside, or null when there is none. */
  file(path: string): string | null;
}

function dirSource(dir: string): Source {
  return {
    file(path) {
      const p = join(dir, path);
      try {
        return lstatSync(p).isFile() ? p : null;
      } catch {
        return null;
      }
    },
  };
}

// An archive member's name as a relative path without `.` parts; null when it climbs out or is absolute.
function cleanName(name: string): string | null {
  if (name.startsWith("/")) return null;
  const parts = name.split("/").filter((p) => p !== "" && p !== ".");
  return parts.some((p) => p === "..") || parts.length === 0 ? null : parts.join("/");
}

/**
 * stageArchive copies each regular file of a tar into `dir` (by number) and returns the source; the
 * archive's tar stream is bounded by `maxBytes` (`ImageTooLarge`, stopped there).
 */
function stageArchive(archive: string, dir: string, maxBytes: number): Source {
  const files = new Map<string, string>();
  const links = new Map<string, string>();
  let n = 0;
  walkTar(
    archive,
    "image archive",
    (e) => {
      const name = cleanName(e.path);
      if (name === null) return null;
      if (e.type === "SymbolicLink" || e.type === "Link") {
        const target = e.type === "Link" ? e.linkpath : posix.join(posix.dirname(name), e.linkpath);
        const t = cleanName(target);
        if (t !== null) links.set(name, t);
        return null;
      }
      if (e.type !== "File" && e.type !== "OldFile" && e.type !== "ContiguousFile") return null;
      const path = join(dir, String(n++));
      const fd = openSync(path, "wx", 0o600);
      files.set(name, path);
      return {
        data: (c) => writeSync(fd, c),
        end: () => closeSync(fd),
      };
    },
    { maxBytes },
  );
  for (const [name, target] of links) {
    const f = files.get(target);
    if (f !== undefined && !files.has(name)) files.set(name, f);
  }
  return { file: (p) => files.get(p) ?? null };
}

function readSmall(src: Source, path: string, what: string): Buffer {
  const f = src.file(path);
  if (f === null) throw new HostError("ImageInvalid", `${what} (${path}) is missing`);
  if (statSync(f).size > MAX_JSON_BLOB)
    throw new HostError("ImageInvalid", `${what} is over ${MAX_JSON_BLOB} bytes`);
  return readFileSync(f);
}

function copyBlob(store: ImageStore, src: Source, d: Descriptor): void {
  const f = src.file(`blobs/sha256/${d.hex}`);
  if (f === null) throw new HostError("ImageInvalid", `blob sha256:${d.hex} is missing from the image`);
  store.putFile(f, d.hex, d.size);
}

/** importManifest copies one image manifest with its config and layers, each verified. */
function importManifest(store: ImageStore, src: Source, m: Descriptor): void {
  copyBlob(store, src, m);
  const manifest = parseManifest(store.readBlob(m.hex, MAX_JSON_BLOB));
  copyBlob(store, src, manifest.config);
  for (const l of manifest.layers) copyBlob(store, src, l);
}

// §14.9.1 Whether an index entry is for this host: it names this host's platform, or none.
function forHost(d: Descriptor): boolean {
  const want = hostPlatform();
  return d.platform === null || (d.platform.os === want.os && d.platform.architecture === want.architecture);
}

function noPlatform(what: string): HostError {
  const want = hostPlatform();
  return new HostError("ImageInvalid", `${what} has no image for ${want.os}/${want.architecture}`);
}

// An index entry that is itself an index (multi-platform): the manifest for this host's platform;
// an entry that names no platform is taken only when it is the only one for the host.
function platformManifest(store: ImageStore, src: Source, d: Descriptor): Descriptor {
  copyBlob(store, src, d);
  const list = parseIndex(store.readBlob(d.hex, MAX_JSON_BLOB), "nested image index");
  const mine = list.filter((x) => isManifest(x) && forHost(x));
  const m = mine.find((x) => x.platform !== null) ?? (mine.length === 1 ? mine[0] : undefined);
  if (m === undefined) throw noPlatform("the image index");
  return m;
}

/** A name given to importImage: the reference, and whether it wrote a tag. */
interface GivenName {
  readonly ref: ImageRef;
  readonly tagged: boolean;
}

// §14.9.1 The name an image is stored under: the given one; a given repository without a tag takes
// the tag an OCI index names when that is a bare tag (what umoci and skopeo write); else the input's
// full name. None is `ImageUnnamed`, naming the flag that is missing.
function nameOf(given: GivenName | null, refName: string | null): ImageRef {
  const bareTag = refName !== null && !/[/:]/.test(refName) ? refName : null;
  if (given !== null)
    return !given.tagged && bareTag !== null ? parseRef(`${given.ref.name}:${bareTag}`) : given.ref;
  if (bareTag !== null)
    throw new HostError(
      "ImageUnnamed",
      `the image names only the tag ${bareTag}: give its repository with --name NAME (stored as NAME:${bareTag})`,
    );
  if (refName === null)
    throw new HostError("ImageUnnamed", "the image carries no name: name it with --name NAME[:TAG]");
  return parseRef(refName);
}

/** An image copied in and not yet named: its name, manifest digest and size. */
interface Pending {
  readonly ref: ImageRef;
  readonly hex: string;
  readonly size: number;
}

// The images of index.json for this host's platform (entries for another platform are left out;
// none left is `ImageInvalid`).
function importLayout(store: ImageStore, src: Source, name: GivenName | null): Pending[] {
  const top = parseIndex(readSmall(src, "index.json", "index.json"), "index.json").filter(forHost);
  if (top.length === 0) throw noPlatform("index.json");
  const out: Pending[] = [];
  for (const d of top) {
    const m = isIndex(d) ? platformManifest(store, src, d) : d;
    if (!isManifest(m))
      throw new HostError("ImageInvalid", `index entry of type ${m.mediaType} is not an image`);
    importManifest(store, src, m);
    out.push({ ref: nameOf(name, d.refName ?? m.refName), hex: m.hex, size: m.size });
  }
  return out;
}

function strings(v: Json | undefined): string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string") ? v : [];
}

// One image of a classic docker-save archive: config by its content hash, layers by diff_ids.
function importDockerImage(
  store: ImageStore,
  src: Source,
  item: Json | undefined,
  name: GivenName | null,
): Pending {
  const o = item !== null && typeof item === "object" && !Array.isArray(item) ? item : null;
  const configPath = typeof o?.Config === "string" ? o.Config : null;
  const layers = strings(o?.Layers);
  if (configPath === null) throw new HostError("ImageInvalid", "manifest.json entry has no Config");
  const cfgFile = src.file(configPath);
  if (cfgFile === null) throw new HostError("ImageInvalid", `config ${configPath} is missing`);
  const cfgHex = sha256File(cfgFile);
  const named = /(?:^|\/)([0-9a-f]{64})(?:\.json)?$/.exec(configPath)?.[1];
  if (named !== undefined && named !== cfgHex)
    throw new HostError("ImageDigestMismatch", `config ${configPath} hashes to sha256:${cfgHex}`);
  store.putFile(cfgFile, cfgHex);
  const cfg = parseJsonBlob(store.readBlob(cfgHex, MAX_JSON_BLOB), "image config");
  const rootfs = cfg.rootfs;
  const diffIds = strings(
    rootfs !== null && typeof rootfs === "object" && !Array.isArray(rootfs) ? rootfs.diff_ids : undefined,
  );
  if (diffIds.length !== layers.length)
    throw new HostError(
      "ImageInvalid",
      `the config lists ${diffIds.length} diff_ids for ${layers.length} layers`,
    );
  const descs = layers.map((path, i) => {
    const f = src.file(path);
    const hex = /^sha256:([0-9a-f]{64})$/.exec(diffIds[i] ?? "")?.[1];
    if (f === null || hex === undefined)
      throw new HostError("ImageInvalid", `layer ${path} is missing or unnamed`);
    store.putFile(f, hex);
    return { mediaType: MEDIA.layer, digest: `sha256:${hex}`, size: statSync(f).size };
  });
  const manifest = {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: { mediaType: MEDIA.config, digest: `sha256:${cfgHex}`, size: statSync(cfgFile).size },
    layers: descs,
  };
  const bytes = Buffer.from(JSON.stringify(manifest));
  const hex = store.putBytes(bytes);
  return { ref: nameOf(name, strings(o?.RepoTags)[0] ?? null), hex, size: bytes.length };
}

function importDockerSave(store: ImageStore, src: Source, name: GivenName | null): Pending[] {
  const bytes = readSmall(src, "manifest.json", "manifest.json");
  let list: Json;
  try {
    list = JSON.parse(bytes.toString("utf8")) as Json;
  } catch (e) {
    throw new HostError("ImageInvalid", "manifest.json is not JSON", { cause: e });
  }
  if (!Array.isArray(list) || list.length === 0)
    throw new HostError("ImageInvalid", "manifest.json lists no image");
  if (name !== null && list.length > 1)
    throw new HostError("ImageInvalid", "--name names one image; this archive holds several");
  return list.map((item) => importDockerImage(store, src, item, name));
}

/** hasTag says whether a reference `name[:tag]` writes its tag. */
function hasTag(name: string): boolean {
  return name.lastIndexOf(":") > name.lastIndexOf("/");
}

/**
 * importImage (§14.9) imports every image of `path` (an OCI layout directory, an OCI archive, or a
 * docker-save archive) into `store` and returns them by name and manifest digest. `name` names the
 * image where the input does not (or overrides it; a `name` without a tag takes the bare tag an OCI
 * index names). Refuses: `ImageUnnamed` (no name, or only a tag: the flag to give is named),
 * `ImageInvalid` (not one of the three forms, a malformed index, manifest or config, a missing blob), `ImageDigestMismatch` (a
 * blob whose bytes do not hash to its digest), `ImageTooLarge` (an archive's tar stream over
 * `limits.maxStagedBytes`). No image is named before every image of the input is in and has passed
 * `verify` (given the manifest hex; the CLI unpacks the rootfs there): a refusal names none.
 */
export function importImage(
  store: ImageStore,
  path: string,
  name?: string,
  opts: { verify?: (hex: string) => void; limits?: ImageLimits | undefined } = {},
): StoredImage[] {
  const ref = name === undefined ? null : { ref: parseRef(name), tagged: hasTag(name) };
  const pending = ((): Pending[] => {
    if (statSync(path).isDirectory()) {
      const src = dirSource(path);
      if (src.file("oci-layout") === null)
        throw new HostError("ImageInvalid", `${path} is not an OCI image layout`);
      return importLayout(store, src, ref);
    }
    const staging = store.tmpPath("import");
    mkdirSync(staging, { mode: 0o700 });
    try {
      const src = stageArchive(path, staging, (opts.limits ?? IMAGE_LIMITS).maxStagedBytes);
      if (src.file("oci-layout") !== null && src.file("index.json") !== null)
        return importLayout(store, src, ref);
      if (src.file("manifest.json") !== null) return importDockerSave(store, src, ref);
      throw new HostError("ImageInvalid", `${path} is neither an OCI archive nor a docker-save archive`);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  })();
  for (const p of pending) opts.verify?.(p.hex);
  for (const p of pending) store.tag(p.ref, p.hex, p.size);
  return pending.map((p) => ({ ...p.ref, hex: p.hex }));
}
