// §13.7 Packs of the file-backed store: the objects of one batch (a snapshot, a journal, an
// archive's import) in one file, so that making the batch durable costs two fsyncs (the pack, its
// folder) however many objects it holds. `packs/<hex>.pack`:
//
//   "sbxpack1"                                  8 bytes
//   the objects' bytes, one after another       from offset 8
//   index: per object, its 32-byte digest ‖ offset (u64 BE) ‖ size (u64 BE), sorted by digest
//   trailer: index offset (u64 BE) ‖ count (u64 BE) ‖ BLAKE3-256 of the index bytes
//
// and <hex> is that BLAKE3 of the index. A reader checks the magic, that the trailer's offset and
// count place the index exactly before it, the index's digest, strict order, and every object
// inside the data region; anything else is `StoreCorrupt`. Objects are checked against their
// address when they are read, as loose ones are.
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { digestBytes, fromHex, parseDigest, toHex, type Digest } from "@sbx/wire";
import { HostError } from "../errors.ts";
import { hashOpenRange } from "../fsat/tree.ts";
import { publishRename, removeQuiet, tempPath } from "./durable.ts";
import { faultPoint, writeFully } from "./fault.ts";

/** The pack's first eight bytes. */
export const PACK_MAGIC = "sbxpack1";
const HEAD = 8;
const ENTRY = 48;
const TRAILER = 48;

/** Where an object's bytes are: a file, the offset of its first byte, its size. */
export interface ObjectLocation {
  readonly path: string;
  readonly offset: number;
  readonly size: number;
}

function corrupt(path: string, what: string): never {
  throw new HostError("StoreCorrupt", `pack ${path}: ${what}`);
}

function readAt(fd: number, pos: number, len: number): Buffer {
  const b = Buffer.alloc(len);
  let got = 0;
  for (let n; got < len && (n = readSync(fd, b, got, len - got, pos + got)) > 0;) got += n;
  return got === len ? b : b.subarray(0, got);
}

/** A sealed pack's index, read and checked once; lookups are binary searches over its bytes. */
export class PackIndex {
  readonly path: string;
  readonly #index: Buffer;
  readonly count: number;

  private constructor(path: string, index: Buffer) {
    this.path = path;
    this.#index = index;
    this.count = index.length / ENTRY;
  }

  /** PackIndex.read opens the pack at `path` and checks its layout (`StoreCorrupt`). */
  static read(path: string): PackIndex {
    const fd = openSync(path, "r");
    try {
      const size = fstatSync(fd).size;
      if (size < HEAD + TRAILER) corrupt(path, `${size} bytes is shorter than an empty pack`);
      if (readAt(fd, 0, HEAD).toString("latin1") !== PACK_MAGIC) corrupt(path, "no pack magic");
      const t = readAt(fd, size - TRAILER, TRAILER);
      const at = Number(t.readBigUInt64BE(0));
      const count = Number(t.readBigUInt64BE(8));
      if (at < HEAD || at + count * ENTRY !== size - TRAILER)
        corrupt(path, "the trailer does not place the index");
      const index = readAt(fd, at, count * ENTRY);
      if (Buffer.compare(parseDigest(digestBytes(index)), t.subarray(16)) !== 0)
        corrupt(path, "the index does not match its digest");
      checkEntries(path, index, at);
      return new PackIndex(path, index);
    } finally {
      closeSync(fd);
    }
  }

  /** find returns where `raw` (32 bytes) is in this pack, or null. */
  find(raw: Uint8Array): ObjectLocation | null {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = Buffer.compare(this.#index.subarray(mid * ENTRY, mid * ENTRY + 32), raw);
      if (c === 0) {
        const e = mid * ENTRY;
        const offset = Number(this.#index.readBigUInt64BE(e + 32));
        return { path: this.path, offset, size: Number(this.#index.readBigUInt64BE(e + 40)) };
      }
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return null;
  }

  /** addresses lists the digests this pack holds (raw, 32 bytes each), in index order. */
  *addresses(): Generator<Uint8Array> {
    for (let i = 0; i < this.count; i++) yield this.#index.subarray(i * ENTRY, i * ENTRY + 32);
  }
}

function checkEntries(path: string, index: Buffer, dataEnd: number): void {
  for (let e = 0; e < index.length; e += ENTRY) {
    if (e > 0 && Buffer.compare(index.subarray(e - ENTRY, e - ENTRY + 32), index.subarray(e, e + 32)) >= 0)
      corrupt(path, "the index is not in strict digest order");
    const off = index.readBigUInt64BE(e + 32);
    const size = index.readBigUInt64BE(e + 40);
    if (off < BigInt(HEAD) || off + size > BigInt(dataEnd)) corrupt(path, "an object lies outside the data");
  }
}

/**
 * A pack being written: objects appended while they are hashed (one pass over the bytes), a
 * duplicate overwritten by the next object, sealed by `seal` into `packs/`. Lives in `tmp/` until
 * then, named like every temp file, so a killed writer's pack is swept with its other temps.
 */
export class PackWriter {
  readonly tmp: string;
  readonly #fd: number;
  #end = HEAD;
  readonly #entries = new Map<string, { offset: number; size: number }>();

  constructor(tmpDir: string) {
    this.tmp = tempPath(tmpDir);
    this.#fd = openSync(this.tmp, "wx", 0o444);
    try {
      writeFully(this.#fd, Buffer.from(PACK_MAGIC, "latin1"), 0, "pack");
    } catch (e) {
      this.abandon();
      throw e;
    }
  }

  /** size is the number of objects appended so far. */
  get size(): number {
    return this.#entries.size;
  }

  /** find returns where an object appended to this pack is (in its temp file), or null. */
  find(hex: string): ObjectLocation | null {
    const e = this.#entries.get(hex);
    return e === undefined ? null : { path: this.tmp, ...e };
  }

  /**
   * appendBytes writes `bytes` as an object unless `has(address)`; returns the address. The bytes
   * are written before the check, so the caller hashes nothing twice.
   */
  appendBytes(bytes: Uint8Array, address: Digest, has: (a: Digest) => boolean): Digest {
    if (!has(address))
      this.#keep(address, bytes.length, () => writeFully(this.#fd, bytes, this.#end, "pack"));
    return address;
  }

  /**
   * appendFd copies at most `limit` bytes of `src` from offset `start` into the pack while hashing
   * them, and keeps them as an object unless `has(address)` once they are hashed.
   */
  appendFd(
    src: number,
    start: number,
    limit: number,
    has: (a: Digest) => boolean,
  ): { address: Digest; size: number } {
    let pos = this.#end;
    const r = hashOpenRange(src, start, limit, (c) => {
      writeFully(this.#fd, c, pos, "pack");
      pos += c.length;
    });
    if (!has(r.digest)) this.#keep(r.digest, r.size, () => undefined);
    return { address: r.digest, size: r.size };
  }

  #keep(address: Digest, size: number, write: () => void): void {
    write();
    this.#entries.set(toHex(parseDigest(address)), { offset: this.#end, size });
    this.#end += size;
  }

  /**
   * seal writes the index and trailer, fsyncs the pack, renames it to `packs/<hex>.pack` and
   * fsyncs that folder; returns the sealed path, or null when nothing was appended (no fsync).
   */
  seal(packsDir: string): string | null {
    if (this.#entries.size === 0) {
      this.abandon();
      return null;
    }
    const hexes = [...this.#entries.keys()].sort();
    const index = Buffer.alloc(hexes.length * ENTRY);
    hexes.forEach((h, i) => {
      const e = this.#entries.get(h)!;
      index.set(fromHex(h), i * ENTRY);
      index.writeBigUInt64BE(BigInt(e.offset), i * ENTRY + 32);
      index.writeBigUInt64BE(BigInt(e.size), i * ENTRY + 40);
    });
    const trailer = Buffer.alloc(TRAILER);
    trailer.writeBigUInt64BE(BigInt(this.#end), 0);
    trailer.writeBigUInt64BE(BigInt(hexes.length), 8);
    const sum = parseDigest(digestBytes(index));
    trailer.set(sum, 16);
    try {
      writeFully(this.#fd, index, this.#end, "pack");
      writeFully(this.#fd, trailer, this.#end + index.length, "pack");
      ftruncateSync(this.#fd, this.#end + index.length + TRAILER);
      faultPoint("fsync-pack");
      fsyncSync(this.#fd);
    } catch (e) {
      this.abandon();
      throw e;
    }
    closeSync(this.#fd);
    const dest = join(packsDir, `${toHex(sum)}.pack`);
    try {
      publishRename(this.tmp, dest, true);
    } catch (e) {
      removeQuiet(this.tmp);
      throw e;
    }
    return dest;
  }

  /** abandon closes and removes the unsealed pack (its objects were never acknowledged). */
  abandon(): void {
    try {
      closeSync(this.#fd);
    } catch {
      /* closed already */
    }
    removeQuiet(this.tmp);
  }
}
