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
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
} from "node:fs";
import { join } from "node:path";
import {
  canonicalBytes,
  parseCanonical,
  digestBytes,
  envelopeAddress,
  formatDigest,
  fromHex,
  parseDigest,
  toHex,
  utf8,
  type Digest,
  type Envelope,
} from "@sbx/wire";
import type { RunRecord, Segment } from "@sbx/sandbox-attest/runrecord";
import { checkObject, type Store } from "@sbx/sandbox-attest/store";
import { HostError, isHostError } from "../errors.ts";
import { hashOpenFile } from "../fsat/tree.ts";
import { fsyncDir, publishRename, removeQuiet, tempPath, TEMP_NAME, writeTemp } from "./durable.ts";
import { faultPoint, writeFully } from "./fault.ts";
import {
  appendRecordLine,
  createRecordFile,
  importRecordFile,
  readSettled,
  readSettledRecord,
  settleRecord,
  recordPaths,
  type SettleReport,
  type VerifiedRecord,
} from "./records.ts";

/** The marker file's content; a directory without it is not a store. */
export const STORE_FORMAT = "sandbox.store/1";

/** Options for opening a store. */
export interface OpenStoreOptions {
  /** Create the directory layout when absent (default false: a missing store is `StoreUnusable`). */
  readonly create?: boolean;
  /** Leave the directory untouched (no sweep of dead writers' temp files): for verification. */
  readonly readOnly?: boolean;
}

/** hashFd hashes at most `limit` bytes of `src` from offset 0, copying them to `out` when given. */
function hashFd(src: number, limit: number, out: number | null): { address: Digest; size: number } {
  const r = hashOpenFile(src, limit, out === null ? undefined : (c) => writeFully(out, c, null, "object"));
  return { address: r.digest, size: r.size };
}

/** storeWrite runs a write step; an OS error becomes `StoreWriteFailed` (nothing was committed). */
function storeWrite<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException | null)?.code;
    if (isHostError(e) || typeof code !== "string" || !code.startsWith("E")) throw e;
    throw new HostError("StoreWriteFailed", `${what}: ${code}; nothing was committed`, { cause: e });
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * readIfPresent reads a file, or returns null when it is absent: one open instead of a stat and an
 * open (a verification reads tens of thousands of objects).
 */
function readIfPresent(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw e;
  }
}

/** The file-backed Store. Its methods are synchronous underneath; the Store interface is async. */
export class FileStore implements Store {
  readonly root: string;
  readonly #dirty = new Set<string>();
  /** Per record, the state this store last verified or wrote: appends continue from it (records.ts). */
  readonly #verified = new Map<Digest, VerifiedRecord>();

  private constructor(root: string) {
    this.root = root;
  }

  /** FileStore.open opens (or with `create` makes) a store directory; `StoreUnusable` when it is not one. */
  static open(root: string, opts: OpenStoreOptions = {}): FileStore {
    try {
      return FileStore.#open(root, opts);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException | null)?.code;
      if (isHostError(e) || typeof code !== "string" || !code.startsWith("E")) throw e;
      throw new HostError("StoreUnusable", `${root} cannot be opened as a store (${code})`, { cause: e });
    }
  }

  static #open(root: string, opts: OpenStoreOptions): FileStore {
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

  // Best effort: only regular files named like our temps, of writers no longer alive; a store this
  // process cannot write (read-only mount, no permission) is left as it is, for its next writer.
  #sweepTemps(): void {
    const tmp = join(this.root, "tmp");
    let names: string[];
    try {
      names = readdirSync(tmp);
    } catch {
      return;
    }
    for (const f of names) {
      const pid = Number(TEMP_NAME.exec(f)?.[1] ?? "0");
      if (pid === 0 || pid === process.pid || pidAlive(pid)) continue;
      const p = join(tmp, f);
      if (lstatSync(p, { throwIfNoEntry: false })?.isFile() !== true) continue;
      try {
        unlinkSync(p);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EROFS" || code === "EACCES" || code === "EPERM") return;
        if (code !== "ENOENT") throw e;
      }
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
      removeQuiet(tmp);
      return;
    }
    try {
      publishRename(tmp, dest, !deferDirSync);
    } catch (e) {
      removeQuiet(tmp); // gone already when the rename happened and only the directory sync failed
      throw e;
    }
    if (deferDirSync) this.#dirty.add(join(dest, ".."));
  }

  /**
   * putObjectSync stores bytes; with `deferDirSync` the directory fsync waits for syncPending().
   * `StoreWriteFailed` when the store cannot be written (no temp file is left behind).
   */
  putObjectSync(bytes: Uint8Array, deferDirSync = false): Digest {
    const address = digestBytes(bytes);
    const dest = this.objectPath(address);
    if (!existsSync(dest))
      storeWrite(`object ${address}`, () =>
        this.#publish(writeTemp(join(this.root, "tmp"), bytes), dest, deferDirSync),
      );
    return address;
  }

  /**
   * putFileSync stores a file's content (a path the host controls) and returns its address and
   * size. For a file in a tree a unit controls, open it with ../fsat and use putFdSync.
   */
  putFileSync(path: string, deferDirSync = false): { address: Digest; size: number } {
    const fd = openSync(path, "r");
    try {
      return this.putFdSync(fd, Number.MAX_SAFE_INTEGER, deferDirSync);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * putFdSync stores at most `limit` bytes of the open file `fd` (from offset 0) and returns their
   * address and size. Hashed first; only when that object is absent is it copied, hashed again while
   * copying, so what is stored is exactly what is addressed even if the file changed in between.
   * `StoreWriteFailed` when the store cannot be written (the temp file is removed).
   */
  putFdSync(fd: number, limit: number, deferDirSync = false): { address: Digest; size: number } {
    const first = hashFd(fd, limit, null);
    if (existsSync(this.objectPath(first.address))) return first;
    return storeWrite("file object", () => {
      const tmp = tempPath(join(this.root, "tmp"));
      const out = openSync(tmp, "wx", 0o444);
      let copied: { address: Digest; size: number };
      try {
        copied = hashFd(fd, limit, out);
        faultPoint("fsync-temp");
        fsyncSync(out);
        closeSync(out);
      } catch (e) {
        closeSync(out);
        removeQuiet(tmp);
        throw e;
      }
      this.#publish(tmp, this.objectPath(copied.address), deferDirSync);
      return copied;
    });
  }

  /** syncPending fsyncs every directory a deferred put changed; a snapshot is durable after it. */
  syncPending(): void {
    storeWrite("directory sync", () => {
      for (const d of this.#dirty) fsyncDir(d);
    });
    this.#dirty.clear();
  }

  /** getObjectSync returns the checked bytes of an object (`ObjectMismatch`), or null when absent. */
  getObjectSync(address: Digest): Uint8Array | null {
    const b = readIfPresent(this.objectPath(address));
    return b === null ? null : checkObject(address, new Uint8Array(b));
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
    return Promise.resolve().then(() => {
      if (!existsSync(dest))
        storeWrite(`signed ${address}`, () =>
          this.#publish(writeTemp(join(this.root, "tmp"), canonicalBytes(env)), dest, false),
        );
      return address;
    });
  }
  getSigned(address: Digest): Promise<unknown> {
    return Promise.resolve().then(() => this.getSignedSync(address));
  }
  /** getSignedSync returns the stored envelope parsed from canonical JSON (wire codes when not), or null. */
  getSignedSync(address: Digest): unknown {
    const b = readIfPresent(this.signedPath(address));
    return b === null ? null : parseCanonical(b);
  }

  createRecord(unitId: Digest, grantsId: Digest): Promise<Digest> {
    return Promise.resolve().then(() =>
      storeWrite("create record", () => createRecordFile(this.root, unitId, grantsId)),
    );
  }
  /**
   * readRecordBytes returns the record as settled (claimed appends completed, unclaimed torn bytes
   * left out) without writing: it works on a read-only store. Null when there is no such record.
   */
  readRecordBytes(id: Digest): Promise<Uint8Array | null> {
    if (!existsSync(this.recordPath(id))) return Promise.resolve(null);
    return Promise.resolve().then(() => readSettled(this.root, id).bytes);
  }
  /**
   * appendSegment (§13.7): resolves with the new head once the segment is committed (its claim
   * linked), even if writing its line into the record failed after that; rejects with
   * `StoreWriteFailed` only when nothing was committed.
   */
  appendSegment(id: Digest, expectedHead: Digest, segment: Segment): Promise<Digest> {
    return Promise.resolve().then(() => this.appendSegmentSync(id, expectedHead, segment));
  }
  /** appendSegmentSync is appendSegment, synchronous; it continues from the state this store last verified. */
  appendSegmentSync(id: Digest, expectedHead: Digest, segment: Segment): Digest {
    const cached = this.#verified.get(id) ?? null;
    this.#verified.delete(id); // re-entered only once the append has verified and written it
    const r = storeWrite("append", () => appendRecordLine(this.root, id, expectedHead, segment, cached));
    if (r.verified !== null) this.#verified.set(id, r.verified);
    return r.head;
  }
  /** settle (a writer) completes or cuts back a record file's tail after a crash and reports what it did. */
  settle(id: Digest): SettleReport {
    this.#verified.delete(id);
    return storeWrite("settle", () => settleRecord(this.root, id).report);
  }
  /**
   * readRunSync reads a record verified from genesis (§13.4), decoded once, as settled (read-only,
   * like readRecordBytes): the record and its settled wire bytes. `RecordMissing` when absent. When
   * the file needed no settling, the next append of this store continues from this state.
   */
  readRunSync(id: Digest): { record: RunRecord; bytes: Uint8Array } {
    const r = readSettledRecord(this.root, id);
    if (r.report.rolledForward === 0 && r.report.cutBytes === 0)
      this.#verified.set(id, { record: r.record.fork(), end: r.bytes.length, ino: r.ino, dev: r.dev });
    return { record: r.record, bytes: r.bytes };
  }
  /** importRecordSync publishes a whole, already verified record (records.ts importRecordFile). */
  importRecordSync(id: Digest, bytes: Uint8Array): boolean {
    return storeWrite("import record", () => importRecordFile(this.root, id, bytes));
  }
  /** recordIds lists the ids of the records the store holds, sorted. */
  recordIds(): Digest[] {
    const names = existsSync(join(this.root, "records")) ? readdirSync(join(this.root, "records")) : [];
    return names
      .filter((n) => /^[0-9a-f]{64}\.runrecord$/.test(n))
      .map((n) => formatDigest(fromHex(n.slice(0, 64))))
      .sort();
  }
  /** readRecord (§13.7, optional member): the record verified once, or null when absent. */
  readRecord(id: Digest): Promise<RunRecord | null> {
    if (!existsSync(this.recordPath(id))) return Promise.resolve(null);
    return Promise.resolve().then(() => this.readRunSync(id).record);
  }
  /** inspect reports what settling would do, without writing (for a read-only reader). */
  inspect(id: Digest): SettleReport {
    return readSettled(this.root, id).report;
  }
}
