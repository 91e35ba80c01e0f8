// §14.9 The rootfs cache: each image's layers unpacked once into `<store>/rootfs/<manifest hex>`,
// with a record beside it: its tree digest, and the stat index (statindex.ts) taken when the tree was
// last hashed. Before every use the tree is walked by lstat and compared with the index; where the
// index does not hold (another boot, any entry changed, a racy file's content changed, no index) the
// whole tree is hashed again and compared with the record's tree digest, and a new index taken. A
// tree that differs (or has no record) is discarded and unpacked afresh from the store's verified
// blobs. A fresh unpack is made in the store's scratch folder and renamed into place.
import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";
import {
  IMAGE_LIMITS,
  MAX_JSON_BLOB,
  parseConfig,
  parseManifest,
  type ImageConfig,
  type ImageLimits,
  type ImageManifest,
} from "./oci.ts";
import { sha256File, type ImageStore } from "./store.ts";
import { unpackLayers, type UnpackStats } from "./unpack.ts";
import { indexHolds, parseStatIndex, takeIndex, type StatIndex } from "./statindex.ts";

/** A rootfs ready to mount: where it is, its tree digest, and the image it came from. */
export interface Rootfs {
  readonly dir: string;
  /** `sha256:<hex>` over the tree listing (treeDigest). */
  readonly tree: string;
  readonly manifestHex: string;
  readonly manifest: ImageManifest;
  readonly config: ImageConfig;
  /** Set when this call unpacked the layers (a cache miss, or a cache that failed its check). */
  readonly unpacked: UnpackStats | null;
}

const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * treeDigest (§14.9) hashes a directory tree without following any link: one line per entry, sorted
 * by name bytes, giving its kind, permission bits, and its content (a file's size and sha256, a
 * link's target). Anything else (a device node, a socket) is `RootfsMismatch`: no unpack makes one.
 */
export function treeDigest(root: string): string {
  const h = createHash("sha256");
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort(byBytes)) {
      const p = join(dir, name);
      const r = rel === "" ? name : `${rel}/${name}`;
      const st = lstatSync(p);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isDirectory()) {
        h.update(`d ${mode} ${r}\0`);
        walk(p, r);
      } else if (st.isFile()) h.update(`f ${mode} ${r}\0${st.size} ${sha256File(p)}\0`);
      else if (st.isSymbolicLink()) h.update(`l ${r}\0${readlinkSync(p)}\0`);
      else throw new HostError("RootfsMismatch", `${r} in the rootfs is not a file, directory or link`);
    }
  };
  walk(root, "");
  return `sha256:${h.digest("hex")}`;
}

interface Record {
  readonly tree: string;
  readonly index?: StatIndex;
}

function readRecord(path: string): Record | null {
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as { tree?: unknown; index?: unknown };
    if (typeof v.tree !== "string") return null;
    const index = parseStatIndex(v.index);
    return index === null ? { tree: v.tree } : { tree: v.tree, index };
  } catch {
    return null;
  }
}

/** imageParts reads and verifies an image's manifest and config from the store. */
export function imageParts(store: ImageStore, hex: string): { manifest: ImageManifest; config: ImageConfig } {
  const manifest = parseManifest(store.readBlob(hex, MAX_JSON_BLOB));
  const config = parseConfig(store.readBlob(manifest.config.hex, MAX_JSON_BLOB));
  return { manifest, config };
}

/** How verifyRootfs checked the tree: by its stat index, or by hashing it whole. */
export type RootfsCheck = "index" | "hashed";

/**
 * verifyRootfs (§14.9.4) says whether the cached rootfs of image `hex` exists and is what its record
 * says: by the stat index when it holds, else (or with `full`, as `sbx image verify` asks) by hashing
 * the whole tree, after which a fresh index is recorded. Returns the tree digest, or throws
 * `RootfsMismatch` (no record, a tree that differs, or one that changed while it was hashed).
 * Returns null when there is no cached rootfs at all. `how` learns which check was made.
 */
export function verifyRootfs(
  store: ImageStore,
  hex: string,
  opts: { readonly full?: boolean; readonly how?: (c: RootfsCheck) => void } = {},
): string | null {
  const dir = join(store.dir, "rootfs", hex);
  if (!existsSync(dir)) return null;
  const rec = readRecord(`${dir}.json`);
  if (rec === null) throw new HostError("RootfsMismatch", `the cached rootfs of sha256:${hex} has no record`);
  if (opts.full !== true && rec.index !== undefined && indexHolds(dir, rec.index)) {
    opts.how?.("index");
    return rec.tree;
  }
  const index = takeIndex(dir, store.tmpPath("probe"), () => {
    const tree = treeDigest(dir);
    if (tree !== rec.tree)
      throw new HostError(
        "RootfsMismatch",
        `the cached rootfs of sha256:${hex} hashes to ${tree}, recorded ${rec.tree}`,
      );
  });
  if (index === null)
    throw new HostError("RootfsMismatch", `the cached rootfs of sha256:${hex} changed while it was hashed`);
  writeRecord(store.tmpPath("record"), `${dir}.json`, { tree: rec.tree, index });
  opts.how?.("hashed");
  return rec.tree;
}

/**
 * ensureRootfs (§14.9) returns the verified rootfs of image `hex` (a manifest digest in the store),
 * unpacking it when there is none or the cached one fails its check. Refuses as unpackLayers does,
 * and `ImageNotInStore`/`ImageDigestMismatch` for the manifest and config.
 */
export function ensureRootfs(store: ImageStore, hex: string, limits: ImageLimits = IMAGE_LIMITS): Rootfs {
  const { manifest, config } = imageParts(store, hex);
  const dir = join(store.dir, "rootfs", hex);
  try {
    const tree = verifyRootfs(store, hex);
    if (tree !== null) return { dir, tree, manifestHex: hex, manifest, config, unpacked: null };
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(join(store.dir, "rootfs"), { recursive: true, mode: 0o755 });
  chmodSync(join(store.dir, "rootfs"), 0o755);
  const tmp = store.tmpPath("rootfs");
  mkdirSync(tmp, { mode: 0o700 });
  let stats: UnpackStats;
  try {
    stats = unpackLayers(store, manifest.layers, tmp, hex, limits);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  let tree = "";
  // The index is taken around the hash (inode numbers and times survive the rename into place).
  const index = takeIndex(tmp, store.tmpPath("probe"), () => {
    tree = treeDigest(tmp);
  });
  const recTmp = store.tmpPath("record");
  // The record goes first: a rootfs in place always has one (a crash between leaves a record whose
  // tree is missing, which the next use unpacks again).
  writeRecord(recTmp, `${dir}.json`, index === null ? { tree } : { tree, index });
  try {
    renameSync(tmp, dir);
  } catch {
    // Another process put the same image in place first: use its tree, after its own check.
    rmSync(tmp, { recursive: true, force: true });
    const theirs = verifyRootfs(store, hex);
    return { dir, tree: theirs ?? tree, manifestHex: hex, manifest, config, unpacked: null };
  }
  return { dir, tree, manifestHex: hex, manifest, config, unpacked: stats };
}

function writeRecord(tmp: string, dest: string, rec: Record): void {
  const fd = openSync(tmp, "wx", 0o644);
  try {
    writeSync(fd, JSON.stringify(rec) + "\n");
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, dest);
}
