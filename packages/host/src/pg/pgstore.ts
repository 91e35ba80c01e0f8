// §13.7 The PostgreSQL store: the same Store as the file store and the memory store, shared by many
// hosts. Objects stream in chunks (objects.ts); signed objects are kept as their canonical bytes;
// run records are a header row and one row per segment.
//
// Compare-and-append (records.ts): an append brings its verified copy of the record up to date (from
// genesis on its first touch, then the new rows only), refuses a moved head (`StaleHead`) and every
// §13.3 refusal, then inserts the segment row naming the head it extends.
// The row's (record, prev) and (record, seq) are unique, so of several hosts extending one head
// exactly one commits; the others' inserts fail on the constraint and are told `StaleHead`.
// Readers trust no row (reader.ts): the record is verified from genesis on a reader's first read
// (`HeadMismatch`, …), each row's own prev/head/seq columns must agree with the chain
// (`StoreCorrupt`); later reads verify only the new rows and check the verified ones unchanged.
import { randomUUID } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import {
  canonicalBytes,
  concatBytes,
  envelopeAddress,
  formatDigest,
  parseCanonical,
  parseDigest,
  type Digest,
  type Envelope,
} from "@sbx/wire";
import {
  encodeHeader,
  runGenesis,
  SandboxAttestError,
  type RunRecord,
  type Segment,
} from "@sbx/sandbox-attest/runrecord";
import type { Store } from "@sbx/sandbox-attest/store";
import { HostError } from "../errors.ts";
import { isUniqueViolation, openPool, redactUrl, withClient, withRetry, type PgOptions } from "./conn.ts";
import { getObjectStream, objectInfo, putObjectStream, type PutResult } from "./objects.ts";
import { PgLogStore } from "./pglog.ts";
import { RecordReader } from "./reader.ts";
import { RecordWriter } from "./records.ts";
import { checkSchema, migrate } from "./schema.ts";

const raw = (a: Digest) => Buffer.from(parseDigest(a));
const dig = (b: Buffer) => formatDigest(new Uint8Array(b));

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  await Promise.resolve();
  yield bytes;
}

/** The PostgreSQL-backed Store. Open with PgStore.open; close when done. */
export class PgStore implements Store {
  readonly url: string;
  readonly pool: Pool;
  readonly retryMs: number;
  /** The ledgers kept in the same database. */
  readonly logs: PgLogStore;
  readonly #writer: RecordWriter;
  readonly #reader: RecordReader;

  private constructor(url: string, pool: Pool, retryMs: number) {
    this.url = url;
    this.pool = pool;
    this.retryMs = retryMs;
    this.logs = new PgLogStore(pool, retryMs);
    this.#writer = new RecordWriter(pool);
    this.#reader = new RecordReader(pool);
  }

  /**
   * PgStore.open connects to `url` and checks the schema version; `StoreUnusable` for a database
   * not initialised (run `sbx store init`) or of a newer schema, `StoreUnreachable` when no server
   * answers within the retry time.
   */
  static async open(url: string, opts: PgOptions = {}): Promise<PgStore> {
    const pool = await openPool(url, opts);
    const s = new PgStore(url, pool, opts.retryMs ?? 30_000);
    try {
      await withRetry(`open ${redactUrl(url)}`, s.retryMs, () => s.#withClient(checkSchema));
    } catch (e) {
      await pool.end();
      throw e;
    }
    return s;
  }

  /** PgStore.init applies the schema migrations (`sbx store init`); returns [version before, after]. */
  static async init(url: string, opts: PgOptions = {}): Promise<[number, number]> {
    const pool = await openPool(url, opts);
    try {
      return await withRetry(`init ${redactUrl(url)}`, opts.retryMs ?? 30_000, () =>
        withClient(pool, migrate),
      );
    } finally {
      await pool.end();
    }
  }

  #withClient<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    return withClient(this.pool, fn);
  }

  /** close ends every connection. */
  close(): Promise<void> {
    return this.pool.end();
  }

  // ---- objects

  putObject(bytes: Uint8Array): Promise<Digest> {
    return this.putObjectStream(once(bytes)).then((r) => r.address);
  }
  /** putObjectStream stores a stream in chunks (bounded memory); `expect` refuses other bytes (`ObjectMismatch`). */
  putObjectStream(src: AsyncIterable<Uint8Array>, expect?: Digest): Promise<PutResult> {
    return putObjectStream(this.pool, this.retryMs, src, expect);
  }
  /**
   * getObjectStream yields an object's bytes verified chunk by chunk and as a whole; null when absent.
   * `expectSize`: refuse an object recorded with another size before reading it (`ObjectMismatch`).
   */
  getObjectStream(address: Digest, expectSize?: bigint): Promise<AsyncGenerator<Uint8Array> | null> {
    return withRetry("object read", this.retryMs, () => getObjectStream(this.pool, address, expectSize));
  }
  async getObject(address: Digest): Promise<Uint8Array | null> {
    const s = await this.getObjectStream(address);
    if (s === null) return null;
    const parts: Uint8Array[] = [];
    for await (const c of s) parts.push(c);
    return concatBytes(...parts);
  }
  async hasObject(address: Digest): Promise<boolean> {
    return (await withRetry("object lookup", this.retryMs, () => objectInfo(this.pool, address))) !== null;
  }

  async putSigned(env: Envelope): Promise<Digest> {
    const address = envelopeAddress(env);
    await withRetry("signed upload", this.retryMs, () =>
      this.pool.query("INSERT INTO sbx_signed (address, envelope) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
        raw(address),
        Buffer.from(canonicalBytes(env)),
      ]),
    );
    return address;
  }
  /** getSigned returns the stored envelope parsed from canonical JSON (wire codes when not), or null. */
  async getSigned(address: Digest): Promise<unknown> {
    const r = await withRetry("signed read", this.retryMs, () =>
      this.pool.query<{ envelope: Buffer }>("SELECT envelope FROM sbx_signed WHERE address = $1", [
        raw(address),
      ]),
    );
    const row = r.rows[0];
    return row === undefined ? null : parseCanonical(new Uint8Array(row.envelope));
  }

  // ---- run records

  async createRecord(unitId: Digest, grantsId: Digest): Promise<Digest> {
    const id = runGenesis(unitId, grantsId);
    const header = Buffer.from(encodeHeader(unitId, grantsId));
    const insert = async () => {
      await this.pool.query("INSERT INTO sbx_records (id, header) VALUES ($1, $2)", [raw(id), header]);
      return id;
    };
    // A lost answer to our own insert shows as a row with exactly our header: ours, created.
    const ours = async () => {
      const r = await this.pool.query<{ header: Buffer }>("SELECT header FROM sbx_records WHERE id = $1", [
        raw(id),
      ]);
      return r.rows[0]?.header.equals(header) === true && (await this.#segmentCount(id)) === 0 ? id : null;
    };
    try {
      await withRetry("create record", this.retryMs, insert, ours);
    } catch (e) {
      if (isUniqueViolation(e)) throw new SandboxAttestError("RecordExists", `record ${id} exists`);
      throw e;
    }
    return id;
  }

  async #segmentCount(id: Digest): Promise<number> {
    const r = await this.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM sbx_segments WHERE record = $1",
      [raw(id)],
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  /**
   * readRecordBytes returns the record's wire bytes, verified (reader.ts: from genesis on this store's
   * first read of it, then the new rows from the verified head, the header and last held row checked
   * unchanged by digest on every read and every held row every FULL_CHECK_EVERY reads, or on this
   * read when `full`), or null when there is none.
   */
  readRecordBytes(id: Digest, opts: { full?: boolean } = {}): Promise<Uint8Array | null> {
    return withRetry("record read", this.retryMs, () => this.#reader.bytes(id, opts));
  }
  /** forgetVerified drops what this store's reader holds verified of `id` (or of every record). */
  forgetVerified(id?: Digest): void {
    this.#reader.forget(id);
  }
  /** readRecord (§13.7, optional member): the record verified as readRecordBytes does, or null. */
  readRecord(id: Digest, opts: { full?: boolean } = {}): Promise<RunRecord | null> {
    return withRetry("record read", this.retryMs, () => this.#reader.record(id, opts));
  }

  /**
   * appendSegment (§13.7) appends `segment` if `expectedHead` is still the head: `StaleHead` when it
   * moved or another host extended it first, `RecordMissing`, and every §13.3 refusal. Resolves with
   * the new head once committed; across a lost connection it retries and finds its own row by token.
   */
  appendSegment(id: Digest, expectedHead: Digest, segment: Segment): Promise<Digest> {
    const token = randomUUID();
    const committed = async () => {
      const r = await this.pool.query<{ head: Buffer }>("SELECT head FROM sbx_segments WHERE token = $1", [
        token,
      ]);
      return r.rows[0] === undefined ? null : dig(r.rows[0].head);
    };
    return withRetry(
      "append",
      this.retryMs,
      () => this.#writer.append(id, expectedHead, segment, token),
      committed,
    );
  }

  /** listRecords returns the id of every record, in byte order. */
  async listRecords(): Promise<Digest[]> {
    const r = await withRetry("list records", this.retryMs, () =>
      this.pool.query<{ id: Buffer }>("SELECT id FROM sbx_records ORDER BY id"),
    );
    // The id column is 32 bytes by its CHECK; a database where that was dropped is refused, coded.
    return r.rows.map((row) => {
      if (row.id.length !== 32)
        throw new HostError("StoreCorrupt", `a record id of ${String(row.id.length)} bytes is stored`);
      return dig(row.id);
    });
  }
}
