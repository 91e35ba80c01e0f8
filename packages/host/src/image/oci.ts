// §14.9 The OCI shapes the image store reads: descriptors, image indexes, image manifests, image
// configs (OCI image-spec v1.1). Each is parsed strictly (no duplicate or prototype keys, bounded
// size) and only the members the store uses are read; anything else about them is refused
// (`ImageInvalid`) rather than guessed.
import { parseStrict, type Json, type JsonObject } from "@sbx/wire";
import { HostError } from "../errors.ts";

/** Largest index, manifest or config blob read: 4 MiB. */
export const MAX_JSON_BLOB = 4 << 20;

/**
 * §14.9.1 The size bounds of an import and an unpack, in bytes of tar stream after inflating (a
 * gzip bomb stops at the bound, never later): one layer, one image (its layers together), and what
 * an archive import stages in the store's `tmp/` (the archive's tar stream). `ImageTooLarge` past one.
 */
export interface ImageLimits {
  readonly maxLayerBytes: number;
  readonly maxImageBytes: number;
  readonly maxStagedBytes: number;
}

export const IMAGE_LIMITS: ImageLimits = {
  maxLayerBytes: 8 * 1024 ** 3,
  maxImageBytes: 16 * 1024 ** 3,
  maxStagedBytes: 16 * 1024 ** 3,
};

export const MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar",
  layerGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  dockerConfig: "application/vnd.docker.container.image.v1+json",
  dockerLayerGzip: "application/vnd.docker.image.rootfs.diff.tar.gzip",
  dockerLayer: "application/vnd.docker.image.rootfs.diff.tar",
} as const;

const LAYER_TYPES: readonly string[] = [
  MEDIA.layer,
  MEDIA.layerGzip,
  MEDIA.dockerLayer,
  MEDIA.dockerLayerGzip,
];
const MANIFEST_TYPES: readonly string[] = [MEDIA.manifest, MEDIA.dockerManifest];
const INDEX_TYPES: readonly string[] = [MEDIA.index, MEDIA.dockerList];
const SHA256 = /^sha256:([0-9a-f]{64})$/;

/** A content descriptor: what a blob is, its sha256 hex and its size. */
export interface Descriptor {
  readonly mediaType: string;
  readonly hex: string;
  readonly size: number;
  /** `org.opencontainers.image.ref.name` (or containerd's `io.containerd.image.name`), if any. */
  readonly refName: string | null;
  readonly platform: { readonly os: string; readonly architecture: string } | null;
}

/** An image manifest: its config and its layers, lowest first. */
export interface ImageManifest {
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
}

/** What a run takes from the image config (§14.9): environment, user, working directory. */
export interface ImageConfig {
  readonly env: readonly string[];
  readonly user: string;
  readonly workingDir: string;
}

function bad(what: string): HostError {
  return new HostError("ImageInvalid", what);
}

/** parseJsonBlob parses a JSON blob strictly (§2.9 limits); `ImageInvalid` when it is not an object. */
export function parseJsonBlob(bytes: Uint8Array, what: string): JsonObject {
  let v: Json;
  try {
    v = parseStrict(bytes, { maxBytes: MAX_JSON_BLOB, numbers: "doubles" });
  } catch (e) {
    throw new HostError("ImageInvalid", `${what} is not valid JSON`, { cause: e });
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw bad(`${what} is not a JSON object`);
  return v;
}

function obj(v: Json | undefined): JsonObject | null {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : null;
}

function str(o: JsonObject | null, k: string): string | null {
  const v = o?.[k];
  return typeof v === "string" ? v : null;
}

/** descriptor reads one descriptor; a digest other than sha256, or a bad size, is `ImageInvalid`. */
export function descriptor(v: Json | undefined, what: string): Descriptor {
  const o = obj(v);
  const mediaType = str(o, "mediaType");
  const hex = SHA256.exec(str(o, "digest") ?? "")?.[1];
  const size = o?.size;
  if (
    mediaType === null ||
    hex === undefined ||
    typeof size !== "number" ||
    !Number.isSafeInteger(size) ||
    size < 0
  )
    throw bad(`${what} is not a descriptor with a sha256 digest and a size`);
  const ann = obj(o?.annotations);
  const plat = obj(o?.platform);
  const os = str(plat, "os");
  const architecture = str(plat, "architecture");
  return {
    mediaType,
    hex,
    size,
    refName: str(ann, "io.containerd.image.name") ?? str(ann, "org.opencontainers.image.ref.name"),
    platform: os !== null && architecture !== null ? { os, architecture } : null,
  };
}

/** isIndex / isManifest: the media types taken as an index or an image manifest. */
export const isIndex = (d: Descriptor): boolean => INDEX_TYPES.includes(d.mediaType);
export const isManifest = (d: Descriptor): boolean => MANIFEST_TYPES.includes(d.mediaType);

/** parseIndex returns an index's manifest descriptors (`ImageInvalid` when it has none). */
export function parseIndex(bytes: Uint8Array, what: string): Descriptor[] {
  const o = parseJsonBlob(bytes, what);
  const list = o.manifests;
  if (o.schemaVersion !== 2 || !Array.isArray(list) || list.length === 0)
    throw bad(`${what} is not an image index (schemaVersion 2, manifests)`);
  return list.map((d, i) => descriptor(d, `${what} manifests[${i}]`));
}

/**
 * parseManifest reads an image manifest: a config descriptor and layer descriptors whose media type
 * is an uncompressed or gzip tar (zstd and foreign layers are `ImageInvalid`).
 */
export function parseManifest(bytes: Uint8Array): ImageManifest {
  const o = parseJsonBlob(bytes, "image manifest");
  const layers = o.layers;
  if (o.schemaVersion !== 2 || !Array.isArray(layers))
    throw bad("not an image manifest (schemaVersion 2, layers)");
  const config = descriptor(o.config, "manifest config");
  const ls = layers.map((d, i) => descriptor(d, `manifest layers[${i}]`));
  for (const l of ls)
    if (!LAYER_TYPES.includes(l.mediaType)) throw bad(`layer media type ${l.mediaType} is not supported`);
  return { config, layers: ls };
}

/** parseConfig reads the members of an image config a run uses (§14.9). */
export function parseConfig(bytes: Uint8Array): ImageConfig {
  const o = parseJsonBlob(bytes, "image config");
  const c = obj(o.config);
  const env = c?.Env ?? [];
  if (!Array.isArray(env) || !env.every((e) => typeof e === "string" && e.includes("=")))
    throw bad("image config Env is not a list of NAME=value strings");
  return { env: env as string[], user: str(c, "User") ?? "", workingDir: str(c, "WorkingDir") ?? "" };
}

/** The host's platform in OCI's words (os linux; amd64, arm64, …). */
export function hostPlatform(): { os: string; architecture: string } {
  const arch: Record<string, string> = {
    x64: "amd64",
    arm64: "arm64",
    arm: "arm",
    ppc64: "ppc64le",
    s390x: "s390x",
  };
  return { os: "linux", architecture: arch[process.arch] ?? process.arch };
}
