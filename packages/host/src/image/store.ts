// §14.9 The local image store: a content-addressed directory that is itself an OCI image layout
// (`oci-layout`, `index.json`, `blobs/sha256/<hex>`). A blob enters only under the sha256 of its own
// bytes (hashed as it is copied in, then fsynced and renamed into place); a blob is hashed again
// whenever it is read for use. `index.json` names images: one descriptor per `name:tag`, with the
// name in `org.opencontainers.image.ref.name`; it is replaced by an atomic rename.
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";
import { MEDIA, parseIndex, type Descriptor } from "./oci.ts";

const HEX = /^[0-9a-f]{64}$/;
const CHUNK = 1 << 20;
const LOCK_STALE_MS = 60_000;
const LOCK_WAIT_MS = 30_000;
// A repository: an optional registry host (with a port), then lower-case path components joined by
// `.`, `_`, `__` or dashes; a tag: a word character, then up to 127 of [\w.-].
const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const NAME = new RegExp(`^(?:[a-z0-9.-]+(?::[0-9]{1,5})?/)?${COMPONENT}(?:/${COMPONENT})*$`);
const TAG = /^\w[\w.-]{0,127}$/;

/** An image name and tag: `name:tag`, the tag `latest` when none is written. */
export interface ImageRef {
  readonly name: string;
  readonly tag: string;
}

/** parseRef splits `name[:tag]` (a `@sha256:` suffix is not part of a name); `ImageInvalid` otherwise. */
export function parseRef(ref: string): ImageRef {
  const bare = ref.replace(/@sha256:[0-9a-f]{64}$/, "");
  const slash = bare.lastIndexOf("/");
  const colon = bare.lastIndexOf(":");
  const name = colon > slash ? bare.slice(0, colon) : bare;
  const tag = colon > slash ? bare.slice(colon + 1) : "latest";
  if (name.length > 255 || !NAME.test(name) || !TAG.test(tag))
    throw new HostError(
      "ImageInvalid",
      `image reference ${JSON.stringify(ref.length > 80 ? `${ref.slice(0, 80)}…` : ref)} is not name[:tag] (lower case, at most 255 characters)`,
    );
  return { name, tag };
}

/** One named image in the store. */
export interface StoredImage {
  readonly name: string;
  readonly tag: string;
  /** The sha256 hex of the image manifest: the image's digest. */
  readonly hex: string;
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The image store (§14.9). */
export class ImageStore {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * open opens the store at `dir`, creating it (mode 0700) when `create` is set; `ImageStoreUnusable`
   * when it is missing (and not created) or is not an image layout.
   */
  static open(dir: string, create: boolean): ImageStore {
    if (!existsSync(join(dir, "oci-layout"))) {
      if (!create) throw new HostError("ImageStoreUnusable", `no image store at ${dir}`);
      try {
        mkdirSync(join(dir, "blobs", "sha256"), { recursive: true, mode: 0o700 });
        mkdirSync(join(dir, "tmp"), { mode: 0o700, recursive: true });
        const s = new ImageStore(dir);
        if (!existsSync(join(dir, "index.json"))) s.writeIndex([]);
        s.replaceFile("oci-layout", Buffer.from('{"imageLayoutVersion":"1.0.0"}\n'));
      } catch (e) {
        throw new HostError("ImageStoreUnusable", `cannot create an image store at ${dir}`, { cause: e });
      }
    }
    mkdirSync(join(dir, "tmp"), { mode: 0o700, recursive: true });
    return new ImageStore(dir);
  }

  /** blobPath is where the blob with sha256 `hex` lies. */
  blobPath(hex: string): string {
    if (!HEX.test(hex)) throw new RangeError("blob digest must be 64 lowercase hex");
    return join(this.dir, "blobs", "sha256", hex);
  }

  hasBlob(hex: string): boolean {
    return existsSync(this.blobPath(hex));
  }

  /** tmpPath returns a fresh name in the store's own scratch folder (same filesystem as the blobs). */
  tmpPath(prefix: string): string {
    return join(this.dir, "tmp", `${prefix}-${process.pid}-${randomBytes(6).toString("hex")}`);
  }

  /**
   * putFile copies the file at `src` in as the blob `hex`, hashing as it copies: bytes that do not hash
   * to `hex` are `ImageDigestMismatch` and nothing enters the store. Bounded by `size` when given.
   */
  putFile(src: string, hex: string, size?: number): void {
    const dest = this.blobPath(hex);
    if (existsSync(dest)) {
      this.verifyBlob(hex);
      return;
    }
    const tmp = this.tmpPath("blob");
    const h = createHash("sha256");
    const inFd = openSync(src, "r");
    const outFd = openSync(tmp, "wx", 0o644);
    let total = 0;
    try {
      const buf = Buffer.allocUnsafe(CHUNK);
      for (let n; (n = readSync(inFd, buf, 0, CHUNK, null)) > 0;) {
        total += n;
        if (size !== undefined && total > size) break;
        h.update(buf.subarray(0, n));
        writeSync(outFd, buf, 0, n);
      }
      fsyncSync(outFd);
    } finally {
      closeSync(inFd);
      closeSync(outFd);
    }
    const got = h.digest("hex");
    if (got !== hex || (size !== undefined && total !== size)) {
      rmSync(tmp, { force: true });
      throw new HostError("ImageDigestMismatch", `blob sha256:${hex}: got sha256:${got} (${total} bytes)`);
    }
    renameSync(tmp, dest);
    fsyncDir(join(this.dir, "blobs", "sha256"));
  }

  /** putBytes stores `bytes` as a blob and returns its sha256 hex. */
  putBytes(bytes: Uint8Array): string {
    const hex = createHash("sha256").update(bytes).digest("hex");
    if (this.hasBlob(hex)) return hex;
    const tmp = this.tmpPath("blob");
    this.writeDurable(tmp, bytes);
    renameSync(tmp, this.blobPath(hex));
    fsyncDir(join(this.dir, "blobs", "sha256"));
    return hex;
  }

  /**
   * readBlob reads a (small) blob and checks it against its digest: `ImageNotInStore` when absent,
   * `ImageDigestMismatch` when its bytes changed, `ImageInvalid` when larger than `max`.
   */
  readBlob(hex: string, max: number): Buffer {
    const p = this.blobPath(hex);
    if (!existsSync(p)) throw new HostError("ImageNotInStore", `blob sha256:${hex} is not in the store`);
    if (statSync(p).size > max)
      throw new HostError("ImageInvalid", `blob sha256:${hex} is over ${max} bytes`);
    const b = readFileSync(p);
    const got = createHash("sha256").update(b).digest("hex");
    if (got !== hex)
      throw new HostError("ImageDigestMismatch", `blob sha256:${hex} now hashes to sha256:${got}`);
    return b;
  }

  /** verifyBlob hashes a stored blob of any size: `ImageNotInStore`, `ImageDigestMismatch`. */
  verifyBlob(hex: string): void {
    const p = this.blobPath(hex);
    if (!existsSync(p)) throw new HostError("ImageNotInStore", `blob sha256:${hex} is not in the store`);
    const got = sha256File(p);
    if (got !== hex)
      throw new HostError("ImageDigestMismatch", `blob sha256:${hex} now hashes to sha256:${got}`);
  }

  /** images lists the named images (`index.json`). */
  images(): StoredImage[] {
    const bytes = readFileSync(join(this.dir, "index.json"));
    const list = (() => {
      try {
        return parseIndex(bytes, "store index.json");
      } catch {
        return [] as Descriptor[];
      }
    })();
    const out: StoredImage[] = [];
    for (const d of list)
      if (d.refName !== null) {
        const r = parseRef(d.refName);
        out.push({ name: r.name, tag: r.tag, hex: d.hex });
      }
    return out;
  }

  /** resolve returns the manifest digest (hex) stored under `name[:tag]`, or null. */
  resolve(ref: string): string | null {
    const r = parseRef(ref);
    return this.images().find((i) => i.name === r.name && i.tag === r.tag)?.hex ?? null;
  }

  /**
   * tag names the manifest `hex` (already stored) `name:tag`, replacing what that name named. Two
   * imports at once take turns (a lock file beside index.json), so neither loses the other's name.
   */
  tag(ref: ImageRef, hex: string, size: number): void {
    this.locked(() => {
      const keep = this.images().filter((i) => !(i.name === ref.name && i.tag === ref.tag));
      const all = [
        ...keep.map((i) => ({ ...i, size: statSync(this.blobPath(i.hex)).size })),
        { ...ref, hex, size },
      ];
      this.writeIndex(all);
    });
  }

  // Runs fn holding index.lock (O_EXCL); a lock older than LOCK_STALE_MS was left by a crash and is
  // taken over; waiting longer than LOCK_WAIT_MS is `ImageStoreUnusable`.
  private locked(fn: () => void): void {
    const lock = join(this.dir, "index.lock");
    const start = Date.now();
    for (;;) {
      try {
        closeSync(openSync(lock, "wx", 0o600));
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if (age > LOCK_STALE_MS) rmSync(lock, { force: true });
        else if (Date.now() - start > LOCK_WAIT_MS)
          throw new HostError("ImageStoreUnusable", `${lock} is held by another import`);
        else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      }
    }
    try {
      fn();
    } finally {
      rmSync(lock, { force: true });
    }
  }

  private writeIndex(list: readonly (StoredImage & { size: number })[]): void {
    const manifests = [...list]
      .sort((a, b) => (`${a.name}:${a.tag}` < `${b.name}:${b.tag}` ? -1 : 1))
      .map((i) => ({
        mediaType: MEDIA.manifest,
        digest: `sha256:${i.hex}`,
        size: i.size,
        annotations: { "org.opencontainers.image.ref.name": `${i.name}:${i.tag}` },
      }));
    this.replaceFile(
      "index.json",
      Buffer.from(JSON.stringify({ schemaVersion: 2, manifests }, null, 2) + "\n"),
    );
  }

  private writeDurable(path: string, bytes: Uint8Array): void {
    const fd = openSync(path, "wx", 0o644);
    try {
      writeSync(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  private replaceFile(name: string, bytes: Uint8Array): void {
    const tmp = this.tmpPath(name);
    this.writeDurable(tmp, bytes);
    renameSync(tmp, join(this.dir, name));
    fsyncDir(this.dir);
  }
}

/** sha256File hashes a file in 1 MiB reads and returns the hex. */
export function sha256File(path: string): string {
  const h = createHash("sha256");
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    for (let n; (n = readSync(fd, buf, 0, CHUNK, null)) > 0;) h.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return h.digest("hex");
}
