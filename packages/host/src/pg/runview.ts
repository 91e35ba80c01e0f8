// Runs read and verified straight from PostgreSQL, without copying them into a local store (`sbx
// runs`, `show`, `verify RUN`, `report RUN` with a postgres:// store). The record's bytes come from
// the database reader (reader.ts: verified from genesis, `HeadMismatch`, `StoreCorrupt`, …); the
// objects the verification asks for are fetched into memory and checked there by the same verifier
// the file store uses (verifyRun, sandbox-attest §13.9 with §13.7.3), so nothing is trusted because
// it came from the database and a row altered there gives the code the file store would.
//
// verifyRun reads objects synchronously, so the view works in passes: a pass runs the verification
// over what is fetched so far and notes every address it asked for that is not; `fill` fetches those
// in batches (one statement per batch of addresses) and, ahead of the next pass, the children of
// every snapshot directory and journal node it fetched, so a pass finds a whole tree at once; the
// passes end when one asks for nothing new. Snapshot leaves (file contents, link targets) are only
// hashed on their way through, never kept: `hash` mode, for verification. In `info` mode (the
// report, which embeds leaves within a budget) a leaf's size is looked up, and its bytes are fetched
// only when the report asks for them.
import {
  concatBytes,
  digestBytes,
  formatDigest,
  isWireError,
  parseCanonical,
  parseDigest,
  type Digest,
} from "@sbx/wire";
import { isSandboxAttestError, parseFsDir, SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import {
  checkObject,
  verifyRun,
  type RunObjects,
  type RunVerification,
  type VerifyRunOptions,
} from "@sbx/sandbox-attest/store";
import { HostError, isHostError } from "../errors.ts";
import { checkLeafFound } from "../snapshot/verify.ts";
import { withRetry } from "./conn.ts";
import type { PgStore } from "./pgstore.ts";

const raw = (a: Digest) => Buffer.from(parseDigest(a));
const dig = (b: Buffer) => formatDigest(new Uint8Array(b));
const bytesOf = (b: Buffer) => new Uint8Array(b.buffer, b.byteOffset, b.length);

/** Most addresses one statement names, and most bytes one batch of object contents brings. */
const BATCH_ADDRESSES = 4096;
const BATCH_BYTES = 16 * 1024 * 1024;
/** Most passes of one verification (each fetches what the one before asked for). */
const MAX_PASSES = 64;

interface Info {
  readonly size: number;
  readonly chunks: number;
}

type Leaf = { readonly digest: Digest; readonly size: bigint } | Error | null;

/** What a report reads objects through: the raw bytes as stored, sizes, signed objects' bytes. */
export interface RawObjects {
  /** The bytes stored at `address`, as stored (unchecked), or null when absent. */
  object(address: Digest): Uint8Array | null;
  /** The size of the object stored at `address`, or null when absent. */
  size(address: Digest): bigint | null;
  /** The stored bytes of the signed object at `address` (canonical JSON), or null when absent. */
  signed(address: Digest): Uint8Array | null;
}

function batches<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

/**
 * PgObjectCache: objects of one store fetched on demand for a synchronous reader (see the file
 * comment). `mode` says what is done with snapshot leaves the verification asks about.
 */
export class PgObjectCache {
  readonly #pg: PgStore;
  readonly #mode: "hash" | "info";
  readonly #info = new Map<Digest, Info | null>();
  readonly #plain = new Map<Digest, Uint8Array | Error | null>();
  readonly #signed = new Map<Digest, Uint8Array | null>();
  readonly #leaves = new Map<Digest, Leaf>();
  /** The size a snapshot entry gives each leaf asked for: a longer object is not read past it. */
  readonly #leafSize = new Map<Digest, bigint>();
  readonly #wantInfo = new Set<Digest>();
  readonly #wantPlain = new Set<Digest>();
  readonly #wantSigned = new Set<Digest>();
  readonly #wantLeaf = new Set<Digest>();
  /** Objects fetched and bytes moved so far. */
  fetched = 0;
  bytes = 0;

  constructor(pg: PgStore, mode: "hash" | "info") {
    this.#pg = pg;
    this.#mode = mode;
  }

  #query<R extends object>(what: string, text: string, values: unknown[]) {
    return withRetry(what, this.#pg.retryMs, () => this.#pg.pool.query<R>(text, values));
  }

  // ---- the synchronous views

  #object(a: Digest): Uint8Array | null {
    if (!this.#plain.has(a)) {
      this.#wantPlain.add(a);
      return null;
    }
    const v = this.#plain.get(a) ?? null;
    if (v instanceof Error) throw v;
    return v;
  }

  /** runObjects is what verifyRun reads: objects checked against their address, leaves by hash. */
  runObjects(): RunObjects {
    return {
      getObject: (a) => {
        const b = this.#object(a);
        return b === null ? null : checkObject(a, b);
      },
      getSigned: (a) => {
        if (!this.#signed.has(a)) {
          this.#wantSigned.add(a);
          return null;
        }
        const b = this.#signed.get(a) ?? null;
        return b === null ? null : parseCanonical(b);
      },
      checkLeaf: (a, size, path) => {
        if (!this.#leaves.has(a)) {
          this.#wantLeaf.add(a); // checked on a later pass
          this.#leafSize.set(a, size);
          return;
        }
        const got = this.#leaves.get(a) ?? null;
        if (got instanceof Error) throw got;
        checkLeafFound(got, a, size, path);
      },
    };
  }

  /** rawObjects is what a report reads: bytes as stored, sizes looked up, nothing checked. */
  rawObjects(): RawObjects {
    return {
      object: (a) => {
        try {
          return this.#object(a);
        } catch {
          return null; // an object the database cannot give whole is absent from the report
        }
      },
      size: (a) => {
        if (!this.#info.has(a)) {
          this.#wantInfo.add(a);
          return null;
        }
        const i = this.#info.get(a) ?? null;
        return i === null ? null : BigInt(i.size);
      },
      signed: (a) => {
        if (!this.#signed.has(a)) {
          this.#wantSigned.add(a);
          return null;
        }
        return this.#signed.get(a) ?? null;
      },
    };
  }

  // ---- fetching

  /** fill fetches everything asked for since the last fill (and what it implies); how many objects. */
  async fill(): Promise<number> {
    let moved = 0;
    for (let round = 0; round < 1_000_000; round++) {
      const signed = [...this.#wantSigned].filter((a) => !this.#signed.has(a));
      const plain = [...this.#wantPlain].filter((a) => !this.#plain.has(a));
      const leaves = [...this.#wantLeaf].filter((a) => !this.#leaves.has(a));
      const infos = [...this.#wantInfo].filter((a) => !this.#info.has(a));
      this.#wantSigned.clear();
      this.#wantPlain.clear();
      this.#wantLeaf.clear();
      this.#wantInfo.clear();
      if (signed.length + plain.length + leaves.length + infos.length === 0) break;
      await this.#fetchSigned(signed);
      await this.#fetchInfo([...plain, ...leaves, ...infos]);
      await this.#fetchPlain(plain);
      if (this.#mode === "hash") await this.#hashLeaves(leaves);
      moved += signed.length + plain.length + leaves.length + infos.length;
    }
    return moved;
  }

  async #fetchSigned(addresses: readonly Digest[]): Promise<void> {
    for (const b of batches(addresses, BATCH_ADDRESSES)) {
      const r = await this.#query<{ a: Buffer; e: Buffer }>(
        "signed read",
        "SELECT address AS a, envelope AS e FROM sbx_signed WHERE address = ANY($1)",
        [b.map(raw)],
      );
      for (const a of b) this.#signed.set(a, null);
      for (const row of r.rows) {
        this.#signed.set(dig(row.a), bytesOf(row.e));
        this.fetched++;
        this.bytes += row.e.length;
      }
    }
  }

  async #fetchInfo(addresses: readonly Digest[]): Promise<void> {
    const todo = [...new Set(addresses)].filter((a) => !this.#info.has(a));
    for (const b of batches(todo, BATCH_ADDRESSES)) {
      const r = await this.#query<{ a: Buffer; size: string; chunks: number }>(
        "object lookup",
        "SELECT address AS a, size, chunks FROM sbx_objects WHERE address = ANY($1)",
        [b.map(raw)],
      );
      for (const a of b) this.#info.set(a, null);
      for (const row of r.rows) this.#info.set(dig(row.a), { size: Number(row.size), chunks: row.chunks });
    }
  }

  /**
   * #contents yields the stored bytes of each present object (one chunk or none: one statement per
   * batch, unchecked; several chunks: streamed and verified whole by the store), or the error that
   * kept it from being read (`StoreCorrupt` for a missing chunk, `ObjectMismatch`).
   */
  async *#contents(addresses: readonly Digest[]): AsyncGenerator<[Digest, Uint8Array | Error]> {
    const small: Digest[] = [];
    for (const a of addresses) {
      const i = this.#info.get(a) ?? null;
      if (i === null) continue;
      if (i.chunks <= 1) small.push(a);
      else
        try {
          // A leaf is read only up to the size its entry gives (getObjectStream refuses past it).
          const src = await this.#pg.getObjectStream(a, this.#leafSize.get(a));
          const parts: Uint8Array[] = [];
          if (src !== null) for await (const part of src) parts.push(part);
          yield [
            a,
            src === null
              ? new HostError("StoreCorrupt", `object ${a} vanished while read`)
              : concatBytes(...parts),
          ];
        } catch (e) {
          if (!(e instanceof Error) || !("code" in e)) throw e;
          yield [a, e];
        }
    }
    let batch: Digest[] = [];
    let size = 0;
    const flush = async function* (this: PgObjectCache): AsyncGenerator<[Digest, Uint8Array | Error]> {
      const names = batch;
      batch = [];
      size = 0;
      if (names.length === 0) return;
      const r = await this.#query<{ a: Buffer; data: Buffer }>(
        "object read",
        "SELECT oc.address AS a, c.data FROM sbx_object_chunks oc JOIN sbx_chunks c ON c.address = oc.chunk WHERE oc.address = ANY($1) AND oc.seq = 0",
        [names.map(raw)],
      );
      const got = new Map(r.rows.map((row) => [dig(row.a), bytesOf(row.data)]));
      for (const a of names) {
        const i = this.#info.get(a);
        // As getObjectStream reads it: the chunks the object row counts, of the size it records.
        const b = i?.chunks === 0 ? new Uint8Array() : (got.get(a) ?? null);
        if (b === null) yield [a, new HostError("StoreCorrupt", `object ${a}: chunk 0 is missing`)];
        else if (b.length !== i?.size)
          yield [
            a,
            new SandboxAttestError(
              "ObjectMismatch",
              `object ${a} holds ${String(b.length)} bytes, recorded as ${String(i?.size)}`,
            ),
          ];
        else yield [a, b];
      }
    };
    for (const a of small) {
      const n = this.#info.get(a)?.size ?? 0;
      if (batch.length > 0 && (size + n > BATCH_BYTES || batch.length >= BATCH_ADDRESSES))
        yield* flush.call(this);
      batch.push(a);
      size += n;
    }
    yield* flush.call(this);
  }

  async #fetchPlain(addresses: readonly Digest[]): Promise<void> {
    for (const a of addresses) if ((this.#info.get(a) ?? null) === null) this.#plain.set(a, null);
    for await (const [a, b] of this.#contents(addresses)) {
      this.#plain.set(a, b);
      if (b instanceof Error) continue;
      this.fetched++;
      this.bytes += b.length;
      this.#expand(b);
    }
  }

  async #hashLeaves(addresses: readonly Digest[]): Promise<void> {
    for (const a of addresses) if ((this.#info.get(a) ?? null) === null) this.#leaves.set(a, null);
    for await (const [a, b] of this.#contents(addresses)) {
      if (b instanceof Error) {
        this.#leaves.set(a, b);
        continue;
      }
      this.#leaves.set(a, { digest: digestBytes(b), size: BigInt(b.length) });
      this.fetched++;
      this.bytes += b.length;
    }
  }

  // What a fetched object names, asked for ahead of the pass that will need it: a snapshot
  // directory's entries, a journal interior node's two children (§13.7.3). Only a hint: what is
  // not a directory or a node asks for nothing, and nothing here is trusted.
  #expand(b: Uint8Array): void {
    if (b.length === 65 && b[0] === 0x01) {
      this.#wantPlain.add(formatDigest(b.slice(1, 33)));
      this.#wantPlain.add(formatDigest(b.slice(33, 65)));
      return;
    }
    if (b[0] !== 0x7b) return; // a directory object is canonical JSON
    let entries;
    try {
      entries = parseFsDir(b).entries;
    } catch {
      return;
    }
    for (const e of entries)
      if (e.kind === "dir") this.#wantPlain.add(e.digest);
      else if (this.#mode === "hash") {
        this.#wantLeaf.add(e.digest);
        this.#leafSize.set(e.digest, BigInt(e.size));
      } else this.#wantInfo.add(e.digest);
  }
}

/** What a PostgreSQL reader gives for one run: its record's bytes (when they verified) and the verdict. */
export interface PgRunVerification {
  readonly bytes: Uint8Array | null;
  readonly run: RunVerification;
  /** Objects fetched from the database for it, and their bytes. */
  readonly fetched: number;
  readonly fetchedBytes: number;
}

/** readRefusal tells a refusal of the database reader (a coded error of the chain) from a failure. */
function readRefusal(e: unknown): { code: string; message: string } | null {
  if (isHostError(e) && e.code === "StoreCorrupt") return { code: e.code, message: e.reason };
  if (isSandboxAttestError(e) || isWireError(e)) return { code: e.code, message: e.reason };
  return null;
}

/**
 * verifyPgRun verifies run `id` from the database (§13.9 with §13.7.3, as the file store's
 * verification does): the record by the store's reader (a refusal of it, such as `HeadMismatch` or
 * `StoreCorrupt` for a row altered in the database, is the verdict, with no record), then every
 * object it references, fetched into memory (none with `recordOnly`). `RecordMissing` (thrown) when
 * there is no such run.
 */
export async function verifyPgRun(
  pg: PgStore,
  id: Digest,
  opts: VerifyRunOptions = {},
  recordOnly = false,
): Promise<PgRunVerification> {
  let bytes: Uint8Array | null;
  try {
    bytes = await pg.readRecordBytes(id);
  } catch (e) {
    const error = readRefusal(e);
    if (error === null) throw e;
    return { bytes: null, run: refused(error), fetched: 0, fetchedBytes: 0 };
  }
  if (bytes === null) throw new SandboxAttestError("RecordMissing", `no record ${id} in the store`);
  if (recordOnly)
    return { bytes, run: verifyRun(bytes, null, { ...opts, expectId: id }), fetched: 0, fetchedBytes: 0 };
  const cache = new PgObjectCache(pg, "hash");
  const o = cache.runObjects();
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const run = verifyRun(bytes, o, { ...opts, expectId: id }, isHostError);
    // Final once a pass asked for nothing it did not have: every answer it got was the store's.
    if ((await cache.fill()) === 0) return { bytes, run, fetched: cache.fetched, fetchedBytes: cache.bytes };
  }
  // Fail closed: a verification that kept asking for more is not a verdict of VALID.
  const error = {
    code: "StoreCorrupt",
    message: `run ${id}: its objects did not settle in ${MAX_PASSES} passes`,
  };
  return { bytes, run: refused(error), fetched: cache.fetched, fetchedBytes: cache.bytes };
}

function refused(error: { code: string; message: string }): RunVerification {
  return {
    valid: false,
    error,
    record: null,
    attestations: new Map(),
    energy: null,
    checked: { attestations: 0, receipts: 0, trees: 0, objects: 0, journals: 0, events: 0 },
    missing: [],
    signers: [],
    objects: { plain: [], signed: [] },
  };
}
