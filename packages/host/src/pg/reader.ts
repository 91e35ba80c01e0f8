// Verified reads of run records in PostgreSQL without re-verifying from genesis on every read.
//
// A reader keeps, per record, the state it verified last: the decoded record, its wire bytes, a
// running SHA-256 over the header and every verified row (prev ‖ head ‖ line), and the SHA-256 over
// the header and the last verified row alone (the "spot" digest). A read is one statement that
// returns the rows after that prefix together with a digest of the prefix as it is now:
//  - on a spot read (most warm reads) the server's SHA-256 over the header and row n (the last row
//    held), found by primary key, so its cost does not grow with the record: a changed header, a
//    changed, deleted or replaced last row, or a history rewritten from any point (row n's prev/head
//    then differ) is refused on that very read;
//  - on a full read (the first warm read after a verification from genesis, every FULL_CHECK_EVERY-th
//    warm read of a record by one reader, and whenever asked: `record(id, { full: true })`) the
//    server's SHA-256 over the header and every held row, as before: an edit to any older row is
//    refused at the latest on the FULL_CHECK_EVERY-th read after it, at once on a full read, and
//    always by a fresh reader (from genesis).
// The new rows are decoded by continueRecord from the verified state (the same strict decoder as
// decodeRecord: every head recomputed, §13.3 on every segment) and their seq/prev/head columns must
// agree with the chain (`StoreCorrupt`). On a digest mismatch the reader verifies the record again
// from genesis, so the refusal carries the same code a fresh reader gives (`HeadMismatch`,
// `StoreCorrupt`, `BadRecord`, `GenesisMismatch`…); a history rewritten into another valid chain is
// `StoreCorrupt` (rows are never updated, so it cannot be legitimate).
//
// Why not the full digest on every read: with 8 readers of a 20-segment record the server spent
// most of each read aggregating and hashing every old row (bench/store.bench.ts, warm 8 readers).
//
// A read with no new rows costs one round trip and no decoding; a read after k new rows decodes k.
// Readers never share a mutable state: a read extends a fork of the cached state and publishes it
// only when it is longer than what is cached.
import { createHash, type Hash } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import { concatBytes, formatDigest, parseDigest, type Digest } from "@sbx/wire";
import {
  continueRecord,
  decodeRecord,
  SandboxAttestError,
  type RunRecord,
} from "@sbx/sandbox-attest/runrecord";
import { HostError } from "../errors.ts";

const raw = (a: Digest) => Buffer.from(parseDigest(a));
const dig = (b: Buffer) => formatDigest(new Uint8Array(b));

/** How many records one reader keeps verified states for (least recently read dropped first). */
export const READER_CACHE = 1024;

/** Every how many warm reads of one record a reader checks every held row (the full digest). */
export const FULL_CHECK_EVERY = 16;

interface Verified {
  readonly record: RunRecord;
  /** header, then one line per segment */
  readonly parts: readonly Uint8Array[];
  /** SHA-256 so far over header ‖ (prev ‖ head ‖ line) per row */
  readonly hash: Hash;
  /** SHA-256 over header ‖ (prev ‖ head ‖ line) of the last row only (header alone when none) */
  readonly spot: Buffer;
  /** warm reads of this state since its prefix was last checked in full */
  reads: number;
}

interface SegRow {
  seq: number;
  prev: Buffer;
  head: Buffer;
  line: Buffer;
}

interface Row {
  header: Buffer;
  seq: number | null;
  prev: Buffer | null;
  head: Buffer | null;
  line: Buffer | null;
}

interface TailRow {
  h: Buffer;
  n: string;
  seq: number | null;
  prev: Buffer | null;
  head: Buffer | null;
  line: Buffer | null;
}

const FULL = {
  name: "sbx_read_full",
  text: "SELECT r.header, s.seq, s.prev, s.head, s.line FROM sbx_records r LEFT JOIN sbx_segments s ON s.record = r.id WHERE r.id = $1 ORDER BY s.seq",
};

// The prefix's digest and count (rows 1..$2) with every row after it, in one snapshot.
const FULL_TAIL = {
  name: "sbx_read_tail",
  text: `WITH p AS (
    SELECT sha256(r.header || coalesce(string_agg(s.prev || s.head || s.line, ''::bytea ORDER BY s.seq), ''::bytea)) AS h,
           count(s.seq) AS n
      FROM sbx_records r LEFT JOIN sbx_segments s ON s.record = r.id AND s.seq <= $2
     WHERE r.id = $1 GROUP BY r.header)
  SELECT p.h, p.n, s.seq, s.prev, s.head, s.line
    FROM p LEFT JOIN sbx_segments s ON s.record = $1 AND s.seq > $2 ORDER BY s.seq`,
};

// The header and row $2 alone (n: 1 when row $2 exists, 0 otherwise; $2 = 0 names no row) with
// every row after it, in one snapshot: two primary-key lookups and a range, whatever the length.
const SPOT_TAIL = {
  name: "sbx_read_spot",
  text: `WITH l AS (SELECT prev || head || line AS b FROM sbx_segments WHERE record = $1 AND seq = $2),
       p AS (SELECT sha256(r.header || coalesce((SELECT b FROM l), ''::bytea)) AS h,
                    (SELECT count(*) FROM l) AS n
               FROM sbx_records r WHERE r.id = $1)
  SELECT p.h, p.n, s.seq, s.prev, s.head, s.line
    FROM p LEFT JOIN sbx_segments s ON s.record = $1 AND s.seq > $2 ORDER BY s.seq`,
};

function corrupt(id: Digest, what: string): HostError {
  return new HostError("StoreCorrupt", `record ${id}: ${what}`);
}

/** checkColumns holds rows (seq from `from`+1) to the heads the decoder derived from their lines. */
function checkColumns(id: Digest, record: RunRecord, from: number, rows: readonly SegRow[]): void {
  if (record.segments.length !== from + rows.length)
    throw corrupt(
      id,
      `${String(rows.length)} segment rows hold ${String(record.segments.length - from)} lines`,
    );
  const heads = record.heads;
  rows.forEach((row, i) => {
    const n = from + i + 1;
    if (row.seq !== n || dig(row.prev) !== heads[n - 1] || dig(row.head) !== heads[n])
      throw corrupt(id, `segment row ${String(row.seq)} does not match its chain`);
  });
}

function hashRows(h: Hash, rows: readonly SegRow[]): void {
  for (const r of rows) h.update(r.prev).update(r.head).update(r.line);
}

function spotOf(header: Uint8Array, last: SegRow | undefined): Buffer {
  const h = createHash("sha256").update(header);
  if (last !== undefined) h.update(last.prev).update(last.head).update(last.line);
  return h.digest();
}

const segRows = (rows: readonly (Row | TailRow)[]): SegRow[] =>
  rows.filter((r): r is (Row | TailRow) & SegRow => r.seq !== null);

/**
 * fromGenesis reads a record in one statement and verifies it from genesis; null when absent.
 * The codes are decodeRecord's for the bytes, `GenesisMismatch` for a header of another run,
 * `StoreCorrupt` for row columns that disagree with the chain.
 */
async function fromGenesis(q: Pool | PoolClient, id: Digest): Promise<Verified | null> {
  const r = await q.query<Row>(FULL, [raw(id)]);
  const first = r.rows[0];
  if (first === undefined) return null;
  const rows = segRows(r.rows);
  const parts = [new Uint8Array(first.header), ...rows.map((row) => new Uint8Array(row.line))];
  const { record } = decodeRecord(concatBytes(...parts));
  if (record.genesis !== id)
    throw new SandboxAttestError("GenesisMismatch", `record stored as ${id} has genesis ${record.genesis}`);
  checkColumns(id, record, 0, rows);
  const hash = createHash("sha256").update(first.header);
  hashRows(hash, rows);
  // reads starts at the limit: the first warm read after a verification from genesis is a full one.
  return { record, parts, hash, spot: spotOf(first.header, rows.at(-1)), reads: FULL_CHECK_EVERY };
}

/** Verified record states of one reader (one PgStore), by record id. */
export class RecordReader {
  readonly #pool: Pool;
  readonly #known = new Map<Digest, Verified>();

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  #keep(id: Digest, v: Verified): void {
    const had = this.#known.get(id);
    if (had !== undefined && had.record.segments.length > v.record.segments.length) return;
    this.#known.delete(id); // re-inserted last: the map's order is the order of use
    this.#known.set(id, v);
    if (this.#known.size > READER_CACHE) {
      const oldest = this.#known.keys().next().value;
      if (oldest !== undefined) this.#known.delete(oldest);
    }
  }

  /** forget drops the verified state held for `id` (every record when absent): the next read is from genesis. */
  forget(id?: Digest): void {
    if (id === undefined) this.#known.clear();
    else this.#known.delete(id);
  }

  /**
   * record returns the record verified (from the held prefix, or from genesis), or null when absent.
   * `full`: check every held row by the server's digest on this read (see the file comment).
   */
  async record(id: Digest, opts: { full?: boolean } = {}): Promise<RunRecord | null> {
    return (await this.#read(id, opts.full === true))?.record.fork() ?? null;
  }
  /** bytes returns the record's wire bytes, verified as `record` does, or null when absent. */
  async bytes(id: Digest, opts: { full?: boolean } = {}): Promise<Uint8Array | null> {
    const v = await this.#read(id, opts.full === true);
    return v === null ? null : concatBytes(...v.parts);
  }

  async #read(id: Digest, askedFull: boolean): Promise<Verified | null> {
    const known = this.#known.get(id);
    if (known === undefined) {
      const v = await fromGenesis(this.#pool, id);
      if (v !== null) this.#keep(id, v);
      return v;
    }
    const n = known.record.segments.length;
    known.reads++;
    const full = askedFull || known.reads >= FULL_CHECK_EVERY;
    if (full) known.reads = 0;
    const r = await this.#pool.query<TailRow>(full ? FULL_TAIL : SPOT_TAIL, [raw(id), n]);
    const first = r.rows[0];
    const mine = full ? known.hash.copy().digest() : known.spot;
    const count = full ? n : Math.min(n, 1);
    if (first === undefined || Number(first.n) !== count || !first.h.equals(mine))
      return this.#rewritten(id, known);
    const rows = segRows(r.rows);
    if (rows.length === 0) return known;
    const record = known.record.fork();
    const lines = rows.map((row) => new Uint8Array(row.line));
    continueRecord(record, concatBytes(...lines), 0);
    checkColumns(id, record, n, rows);
    const hash = known.hash.copy();
    hashRows(hash, rows);
    const header = known.parts[0] ?? new Uint8Array();
    const v: Verified = {
      record,
      parts: [...known.parts, ...lines],
      hash,
      spot: spotOf(header, rows.at(-1)),
      reads: full ? 0 : known.reads,
    };
    this.#keep(id, v);
    return v;
  }

  // The rows this reader verified are no longer in the database as they were: verify from genesis
  // for the code a fresh reader would give; a record that now verifies differently was rewritten.
  async #rewritten(id: Digest, known: Verified): Promise<never> {
    let v: Verified | null;
    try {
      v = await fromGenesis(this.#pool, id);
    } finally {
      // This reader keeps refusing, whatever the record becomes: its next read checks in full again.
      known.reads = FULL_CHECK_EVERY;
      this.#known.set(id, known);
    }
    if (v === null) throw corrupt(id, "the record's rows are gone from the database");
    throw corrupt(id, "rows this reader verified were changed in the database");
  }
}
