// §13.7 The file-backed store, the embedded default. A directory:
//   sbx-store            marker with the format name
//   objects/<2 hex>/<62 hex>        raw bytes whose BLAKE3 is the address
//   signed/<2 hex>/<62 hex>.json    a DSSE envelope (JCS) stored under its payload's address
//   records/…                       run records (see records.ts)
//   tmp/<pid>-<random>              temp files; those of dead processes are swept on open
// Every object is written to a temp file, fsynced, renamed into place, and its directory fsynced.
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  unlinkSync,
} from "node:fs";
import { join } from "node:path";
import {
  canonicalBytes,
  createBlake3,
  parseCanonical,
  digestBytes,
  envelopeAddress,
  formatDigest,
  parseDigest,
  toHex,
  utf8,
  type Digest,
  type Envelope,
} from "@sbx/wire";
import type { Segment } from "@sbx/sandbox-attest/runrecord";
import { checkObject, type Store } from "@sbx/sandbox-attest/store";
import { HostError } from "../errors.ts";
import { fsyncDir, publishRename, tempPath, writeTemp } from "./durable.ts";
import { faultPoint, writeFully } from "./fault.ts";
import {
  appendRecordLine,
  createRecordFile,
  settleRecord,
  recordPaths,
  type SettleReport,
} from "./records.ts";

/** The marker file's content; a directory without it is not a store. */
export const STORE_FORMAT = "sandbox.store/1";
const CHUNK = 1 << 20;
const CHUNK_BUF = new Uint8Array(CHUNK);

/** Options for opening a store. */
export interface OpenStoreOptions {
  /** Create the directory layout when absent (default false: a missing store is `StoreUnusable`). */
  readonly create?: boolean;
  /** Leave the directory untouched (no sweep of dead writers' temp files): for verification. */
  readonly readOnly?: boolean;
}

/** hashFile streams a file through BLAKE3, copying it to `out` when given. */
function hashFile(path: string, out: number | null): { address: Digest; size: number } {
  const src = openSync(path, "r");
  const h = createBlake3();
  const buf = CHUNK_BUF; // synchronous use only, so one buffer serves every call
  let size = 0;
  try {
    for (let n; (n = readSync(src, buf, 0, CHUNK, null)) > 0; size += n) {
      h.update(buf.subarray(0, n));
      if (out !== null) writeFully(out, buf.subarray(0, n), null, "object");
    }
  } finally {
    closeSync(src);
  }
  return { address: formatDigest(h.digest()), size };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The file-backed Store. Its methods are synchronous underneath; the Store interface is async. */
export class FileStore implements Store {
  readonly root: string;
  readonly #dirty = new Set<string>();

  private constructor(root: string) {
    this.root = root;
  }

  /** FileStore.open opens (or with `create` makes) a store directory; `StoreUnusable` when it is not one. */
  static open(root: string, opts: OpenStoreOptions = {}): FileStore {
    const marker = join(root, "sbx-store");
    if (!existsSync(marker)) {
      if (opts.create !== true)
        throw new HostError("StoreUnusable", `${root} is not a store (no sbx-store marker)`);
      for (const d of ["objects", "signed", "records", "tmp"]) mkdirSync(join(root, d), { recursive: true });
      // The marker goes in last and atomically: a store is either unmarked (create again) or whole.
      publishRename(writeTemp(join(root, "tmp"), utf8(STORE_FORMAT + "\n")), marker, true);
    }
    if (readFileSync(marker, "utf8").trim() !== STORE_FORMAT)
      throw new HostError("StoreUnusable", `${root}: unknown store format`);
    const s = new FileStore(root);
    if (opts.readOnly !== true) s.#sweepTemps();
    return s;
  }

  #sweepTemps(): void {
    const tmp = join(this.root, "tmp");
    for (const f of readdirSync(tmp)) {
      const pid = Number(f.split("-")[0]);
      if (Number.isSafeInteger(pid) && pid !== process.pid && !pidAlive(pid)) unlinkSync(join(tmp, f));
    }
  }

  /** objectPath is where the object `address` lives. */
  objectPath(address: Digest): string {
    const hex = toHex(parseDigest(address));
    return join(this.root, "objects", hex.slice(0, 2), hex.slice(2));
  }
  /** signedPath is where the envelope whose payload address is `address` lives. */
  signedPath(address: Digest): string {
    const hex = toHex(parseDigest(address));
    return join(this.root, "signed", hex.slice(0, 2), `${hex.slice(2)}.json`);
  }
  /** recordPath is the wire-form file of the record `id` (its genesis head). */
  recordPath(id: Digest): string {
    return recordPaths(this.root, id).file;
  }

  #publish(tmp: string, dest: string, deferDirSync: boolean): void {
    if (existsSync(dest)) {
      unlinkSync(tmp);
      return;
    }
    publishRename(tmp, dest, !deferDirSync);
    if (deferDirSync) this.#dirty.add(join(dest, ".."));
  }

  /** putObjectSync stores bytes; with `deferDirSync` the directory fsync waits for syncPending(). */
  putObjectSync(bytes: Uint8Array, deferDirSync = false): Digest {
    const address = digestBytes(bytes);
    const dest = this.objectPath(address);
    if (!existsSync(dest)) this.#publish(writeTemp(join(this.root, "tmp"), bytes), dest, deferDirSync);
    return address;
  }

  /**
   * putFileSync stores a file's content and returns its address and size. The file is hashed first;
   * only when that object is absent is it copied (hashed again while copying, so what is stored is
   * exactly what is addressed even if the file changed in between).
   */
  putFileSync(path: string, deferDirSync = false): { address: Digest; size: number } {
    const first = hashFile(path, null);
    if (existsSync(this.objectPath(first.address))) return first;
    const tmp = tempPath(join(this.root, "tmp"));
    const out = openSync(tmp, "wx", 0o444);
    let copied: { address: Digest; size: number };
    try {
      copied = hashFile(path, out);
      faultPoint("fsync-temp");
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    this.#publish(tmp, this.objectPath(copied.address), deferDirSync);
    return copied;
  }

  /** syncPending fsyncs every directory a deferred put changed; a snapshot is durable after it. */
  syncPending(): void {
    for (const d of this.#dirty) fsyncDir(d);
    this.#dirty.clear();
  }

  /** getObjectSync returns the checked bytes of an object (`ObjectMismatch`), or null when absent. */
  getObjectSync(address: Digest): Uint8Array | null {
    const p = this.objectPath(address);
    return existsSync(p) ? checkObject(address, new Uint8Array(readFileSync(p))) : null;
  }

  putObject(bytes: Uint8Array): Promise<Digest> {
    return Promise.resolve().then(() => this.putObjectSync(bytes));
  }
  getObject(address: Digest): Promise<Uint8Array | null> {
    return Promise.resolve().then(() => this.getObjectSync(address));
  }
  hasObject(address: Digest): Promise<boolean> {
    return Promise.resolve(existsSync(this.objectPath(address)));
  }
  putSigned(env: Envelope): Promise<Digest> {
    const address = envelopeAddress(env);
    const dest = this.signedPath(address);
    if (!existsSync(dest)) this.#publish(writeTemp(join(this.root, "tmp"), canonicalBytes(env)), dest, false);
    return Promise.resolve(address);
  }
  getSigned(address: Digest): Promise<unknown> {
    return Promise.resolve().then(() => this.getSignedSync(address));
  }
  /** getSignedSync returns the stored envelope parsed from canonical JSON (wire codes when not), or null. */
  getSignedSync(address: Digest): unknown {
    const p = this.signedPath(address);
    return existsSync(p) ? parseCanonical(readFileSync(p)) : null;
  }

  createRecord(unitId: Digest, grantsId: Digest): Promise<Digest> {
    return Promise.resolve().then(() => createRecordFile(this.root, unitId, grantsId));
  }
  /** readRecordBytes settles the record first (completes claimed appends, cuts unclaimed torn bytes). */
  readRecordBytes(id: Digest): Promise<Uint8Array | null> {
    if (!existsSync(this.recordPath(id))) return Promise.resolve(null);
    return Promise.resolve().then(() => settleRecord(this.root, id).bytes);
  }
  appendSegment(id: Digest, expectedHead: Digest, segment: Segment): Promise<Digest> {
    return Promise.resolve().then(() => appendRecordLine(this.root, id, expectedHead, segment));
  }
  /** settle completes or cuts back a record's tail after a crash and reports what it did. */
  settle(id: Digest): SettleReport {
    return settleRecord(this.root, id).report;
  }
}
