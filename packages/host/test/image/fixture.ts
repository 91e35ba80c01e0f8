// Test images built here from Debian's busybox-static (/bin/busybox): a literal ustar writer (written
// from POSIX pax/ustar's header layout, independent of npm `tar`), then an OCI image layout, an OCI
// archive of it, and a classic `docker save` archive of the same image. Nothing is downloaded.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

export type EntryKind = "file" | "dir" | "symlink" | "link" | "char" | "block" | "fifo";

/** One tar entry to write. */
export interface Entry {
  readonly name: string;
  readonly kind: EntryKind;
  readonly mode?: number;
  readonly body?: Uint8Array | string;
  readonly link?: string;
}

const TYPEFLAG: Record<EntryKind, string> = {
  file: "0",
  link: "1",
  symlink: "2",
  char: "3",
  block: "4",
  dir: "5",
  fifo: "6",
};

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, "0") + "\0";
}

/** header writes one 512-byte ustar header. */
function header(e: Entry, size: number): Buffer {
  const h = Buffer.alloc(512);
  if (Buffer.byteLength(e.name) > 100) throw new RangeError(`test tar: name ${e.name} over 100 bytes`);
  h.write(e.name, 0, 100, "utf8");
  const mode = e.mode ?? (e.kind === "dir" ? 0o755 : e.kind === "symlink" ? 0o777 : 0o644);
  h.write(octal(mode, 8), 100, "ascii");
  h.write(octal(0, 8), 108, "ascii");
  h.write(octal(0, 8), 116, "ascii");
  h.write(octal(size, 12), 124, "ascii");
  h.write(octal(0, 12), 136, "ascii");
  h.write("        ", 148, "ascii");
  h.write(TYPEFLAG[e.kind], 156, "ascii");
  h.write(e.link ?? "", 157, 100, "utf8");
  h.write("ustar\0", 257, "ascii");
  h.write("00", 263, "ascii");
  h.write(octal(0, 8), 329, "ascii");
  h.write(octal(0, 8), 337, "ascii");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148, "ascii");
  return h;
}

/** tarOf writes entries as an uncompressed ustar archive. */
export function tarOf(entries: readonly Entry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = e.kind === "file" ? Buffer.from(e.body ?? "") : Buffer.alloc(0);
    parts.push(header(e, body.length), body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

export const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

export const BUSYBOX = "/bin/busybox";
const APPLETS = [
  "sh",
  "true",
  "false",
  "id",
  "env",
  "cat",
  "ls",
  "pwd",
  "echo",
  "stat",
  "test",
  "grep",
  "nproc",
];

/** The base layer: busybox and its applet links, /etc with users, a setuid file, a hard link. */
export function baseLayer(): Entry[] {
  return [
    { name: "bin/", kind: "dir" },
    { name: "bin/busybox", kind: "file", mode: 0o755, body: readFileSync(BUSYBOX) },
    ...APPLETS.map((a): Entry => ({ name: `bin/${a}`, kind: "symlink", link: "busybox" })),
    { name: "bin/bb-hard", kind: "link", link: "bin/busybox" },
    { name: "bin/suid", kind: "file", mode: 0o4755, body: "#!/bin/sh\necho suid\n" },
    { name: "etc/", kind: "dir" },
    {
      name: "etc/passwd",
      kind: "file",
      body: "root:x:0:0:root:/root:/bin/sh\nvscode:x:1000:1000::/home/vscode:/bin/sh\ndaemon:x:2:2::/:/bin/false\n",
    },
    { name: "etc/group", kind: "file", body: "root:x:0:\nvscode:x:1000:\n" },
    { name: "etc/motd", kind: "file", body: "lower layer\n" },
    { name: "home/", kind: "dir" },
    { name: "home/vscode/", kind: "dir", mode: 0o755 },
    { name: "root/", kind: "dir", mode: 0o700 },
    { name: "tmp/", kind: "dir", mode: 0o1777 },
    { name: "opt/", kind: "dir" },
    { name: "opt/old/", kind: "dir" },
    { name: "opt/old/a", kind: "file", body: "old\n" },
    { name: "opt/keep", kind: "file", body: "hidden by the opaque whiteout\n" },
    { name: "lib", kind: "symlink", link: "usr/lib" },
    { name: "usr/", kind: "dir" },
    { name: "usr/lib/", kind: "dir" },
  ];
}

/** The upper layer: a file whiteout, an opaque directory, a new script. */
export function upperLayer(): Entry[] {
  return [
    { name: "etc/.wh.motd", kind: "file" },
    { name: "opt/.wh..wh..opq", kind: "file" },
    { name: "opt/new", kind: "file", body: "new\n" },
    { name: "usr/local/", kind: "dir" },
    { name: "usr/local/bin/", kind: "dir" },
    {
      name: "usr/local/bin/hello",
      kind: "file",
      mode: 0o755,
      body: '#!/bin/sh\necho "hello from the image"\n',
    },
  ];
}

export const IMAGE_ENV = [
  "PATH=/usr/local/bin:/bin",
  "IMAGE_VAR=from-image",
  "OVERRIDE_ME=image",
  "UNSET_ME=image",
];

/** A built image: its blobs by hex, and the descriptors that tie them together. */
export interface BuiltImage {
  readonly blobs: Map<string, Buffer>;
  readonly manifestHex: string;
  readonly configHex: string;
  /** Uncompressed layer tars, lowest first (what a docker-save archive holds). */
  readonly layerTars: readonly Buffer[];
}

/**
 * buildImage makes an image of `layers` (the last one gzip-compressed when `gzipLast`) with a config
 * holding IMAGE_ENV and `user`.
 */
export function buildImage(layers: readonly Entry[][], user = "", gzipLast = true): BuiltImage {
  const blobs = new Map<string, Buffer>();
  const put = (b: Buffer) => {
    const h = sha256(b);
    blobs.set(h, b);
    return h;
  };
  const tars = layers.map((l) => tarOf(l));
  const descs = tars.map((t, i) => {
    const gz = gzipLast && i === tars.length - 1 && tars.length > 1;
    const b = gz ? gzipSync(t) : t;
    return {
      mediaType: gz
        ? "application/vnd.oci.image.layer.v1.tar+gzip"
        : "application/vnd.oci.image.layer.v1.tar",
      digest: `sha256:${put(b)}`,
      size: b.length,
    };
  });
  const config = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: { Env: IMAGE_ENV, User: user, WorkingDir: "/" },
      rootfs: { type: "layers", diff_ids: tars.map((t) => `sha256:${sha256(t)}`) },
    }),
  );
  const configHex = put(config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: `sha256:${configHex}`,
        size: config.length,
      },
      layers: descs,
    }),
  );
  return { blobs, manifestHex: put(manifest), configHex, layerTars: tars };
}

/** writeLayout writes `img` as an OCI image layout in `dir`, named `ref` (or unnamed when null). */
export function writeLayout(img: BuiltImage, dir: string, ref: string | null): void {
  mkdirSync(join(dir, "blobs", "sha256"), { recursive: true });
  writeFileSync(join(dir, "oci-layout"), '{"imageLayoutVersion":"1.0.0"}');
  const m = img.blobs.get(img.manifestHex) ?? Buffer.alloc(0);
  const desc = {
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    digest: `sha256:${img.manifestHex}`,
    size: m.length,
    ...(ref !== null ? { annotations: { "org.opencontainers.image.ref.name": ref } } : {}),
  };
  writeFileSync(join(dir, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [desc] }));
  for (const [h, b] of img.blobs)
    if (!existsSync(join(dir, "blobs/sha256", h))) writeFileSync(join(dir, "blobs/sha256", h), b);
}

/** ociArchive is the tar of an OCI layout of `img` (what `skopeo copy … oci-archive:` writes). */
export function ociArchive(img: BuiltImage, ref: string): Buffer {
  const m = img.blobs.get(img.manifestHex) ?? Buffer.alloc(0);
  const index = {
    schemaVersion: 2,
    manifests: [
      {
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        digest: `sha256:${img.manifestHex}`,
        size: m.length,
        annotations: { "org.opencontainers.image.ref.name": ref },
      },
    ],
  };
  return tarOf([
    { name: "oci-layout", kind: "file", body: '{"imageLayoutVersion":"1.0.0"}' },
    { name: "index.json", kind: "file", body: JSON.stringify(index) },
    { name: "blobs/", kind: "dir" },
    { name: "blobs/sha256/", kind: "dir" },
    ...[...img.blobs].map(([h, b]): Entry => ({ name: `blobs/sha256/${h}`, kind: "file", body: b })),
  ]);
}

/** dockerSave is a classic `docker save` archive of `img`: manifest.json, <hex>.json, <n>/layer.tar. */
export function dockerSave(img: BuiltImage, repoTag: string): Buffer {
  const config = img.blobs.get(img.configHex) ?? Buffer.alloc(0);
  const layers = img.layerTars.map((_, i) => `${String(i).padStart(64, "a")}/layer.tar`);
  return tarOf([
    {
      name: "manifest.json",
      kind: "file",
      body: JSON.stringify([{ Config: `${img.configHex}.json`, RepoTags: [repoTag], Layers: layers }]),
    },
    { name: `${img.configHex}.json`, kind: "file", body: config },
    ...img.layerTars.flatMap((t, i): Entry[] => [
      { name: `${String(i).padStart(64, "a")}/`, kind: "dir" },
      { name: layers[i] ?? "", kind: "file", body: t },
    ]),
  ]);
}
