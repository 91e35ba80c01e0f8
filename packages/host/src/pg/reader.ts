// Verified reads of run records in PostgreSQL without re-verifying from genesis on every read.
//
// A read is one statement returning one row: the record's bytes (the header row followed by every
// segment row's line, joined by the server in seq order, so the client decodes them where they
// arrive, with no copy per row) and the segment rows' columns. Every row is still checked: the bytes
// are decoded from genesis by the strict decoder (decodeRecord: every head recomputed, §13.3 on every
// segment), the header row must hold exactly one line, and each row's seq/prev/head columns and its
// line's length must agree with the chain (`StoreCorrupt`). A read from genesis receives the columns
// as the server's framed SHA-256 over them and the row count, and compares them with the same digest
// computed from the decoded chain (so a row holding two lines, or none, changes the lengths hashed);
// a warm read receives the new rows' columns themselves (`cols`, a fixed binary layout).
//
// A reader keeps, per record, the state it verified last: the decoded record, its wire bytes and
// where each line ends. A later read returns the rows after that prefix, in the same form, together
// with a digest of the prefix as it is now:
//  - on a spot read (most warm reads) the server's SHA-256 over the header and row n (the last row
//    held), found by primary key, so its cost does not grow with the record: a changed header, a
//    changed, deleted or replaced last row, or a history rewritten from any point (row n's prev/head
//    then differ) is refused on that very read;
//  - on a full read (the first warm read after a verification from genesis, every FULL_CHECK_EVERY-th
//    warm read of a record by one reader, and whenever asked: `record(id, { full: true })`) the
//    server's SHA-256 over the header and every held row: an edit to any older row is refused at the
//    latest on the FULL_CHECK_EVERY-th read after it, at once on a full read, and always by a fresh
//    reader (from genesis).
// Both digests frame every part they cover: each of the header, prev, head and line enters the hash
// as its length (4 bytes, big-endian) then its bytes, so no two different splits of the same bytes
// between header and rows, or between a row's columns, hash alike (`frame` below, `FRAMED` in SQL).
// The reader computes its side from its verified state (the columns it checked equal the chain's
// heads), lazily: a read from genesis hashes nothing; the first warm read builds the digests.
// The new rows are decoded by continueRecord from the verified state (the same strict decoder) and
// checked like the rows of a cold read. On a digest mismatch the reader verifies the record again
// from genesis, so the refusal carries the same code a fresh reader gives (`HeadMismatch`,
// `StoreCorrupt`, `BadRecord`, `GenesisMismatch`…); a history rewritten into another valid chain is
// `StoreCorrupt` (rows are never updated, so it cannot be legitimate).
//
// Why not the full digest on every read: with 8 readers of a 20-segment record the server spent
// most of each read aggregating and hashing every old row (bench/store.bench.ts, warm 8 readers).
// Why one row: a result of one row per segment cost the client more to receive and take apart
// (pg's per-row, per-column parsing and one Buffer per value) than decoding and verifying the
// record did (bench/store.bench.ts, cold reads). Why a digest of the columns on a cold read: the
// columns in hex were a third of the result, and parsing and comparing them cost the client about
// as much as decoding the record's header.
//
// Readers never share a mutable state: a read extends a fork of the cached state and publishes it
// only when it is longer than what is cached.
import { createHash, type Hash } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import { concatBytes, parseDigest, type Digest } from "@sbx/wire";
import {
  continueRecord,
  decodeRecord,
  SandboxAttestError,
  type RunRecord,
} from "@sbx/sandbox-attest/runrecord";
import { HostError } from "../errors.ts";

const raw = (a: Digest) => Buffer.from(parseDigest(a));
const LF = 0x0a;

/** How many records one reader keeps verified states for (least recently read dropped first). */
export const READER_CACHE = 1024;

/** Every how many warm reads of one record a reader checks every held row (the full digest). */
export const FULL_CHECK_EVERY = 16;

interface Verified {
  readonly record: RunRecord;
  /** the record's wire bytes: the header row, then each segment row's line */
  readonly bytes: Uint8Array;
  /** the offset just past the header (ends[0]) and past each line (ends[n] for segment n) */
  readonly ends: readonly number[];
  /** framed SHA-256 so far over header, then (prev, head, line) per row; built on first need */
  hash: Hash | null;
  /** framed SHA-256 over the header and the last row only (the header alone when none); on first need */
  spot: Buffer | null;
  /** warm reads of this state since its prefix was last checked in full */
  reads: number;
}

/** One segment row as the statement describes it in `cols`: its columns and where its line lies. */
interface RowCols {
  readonly seq: number;
  /** where the prev and head columns lie in `cols`, and their lengths */
  readonly prevAt: number;
  readonly prevLength: number;
  readonly headAt: number;
  readonly headLength: number;
}

/** What every read statement returns (one row). */
interface ReadRow {
  /** the prefix digest (warm reads) */
  h?: Buffer;
  /** how many held rows the digest covered (warm reads) */
  n?: string | number;
  /** warm reads: the new rows' lines */
  bytes?: Buffer | null;
  /** cold reads: the header row's bytes then every line, in base64 (newlines ignored) */
  b64?: string;
  /** cold reads: the header row's length */
  hl?: number;
  /** warm reads: the new rows' columns (see LINES_AND_COLS) */
  cols?: Buffer | null;
  /** cold reads: the framed digest of every segment row's columns (see COLD) */
  c?: Buffer;
}

// A bytea's frame for the digests: its length as 4 bytes big-endian, then its bytes.
const FRAMED = (x: string) => `int4send(length(${x})) || ${x}`;
const ROW_FRAMED = (s: string) =>
  `${FRAMED(`${s}.prev`)} || ${FRAMED(`${s}.head`)} || ${FRAMED(`${s}.line`)}`;
// Per segment row: seq, the line's length, then prev and head each with its length (4 bytes each,
// big-endian), so the client reads the columns as they are stored, whatever their lengths.
const COLS = (s: string) =>
  `int4send(${s}.seq) || int4send(length(${s}.line)) || ${FRAMED(`${s}.prev`)} || ${FRAMED(`${s}.head`)}`;
const LINES_AND_COLS = (s: string) =>
  `string_agg(${s}.line, ''::bytea ORDER BY ${s}.seq) AS lines, ` +
  `string_agg(${COLS(s)}, ''::bytea ORDER BY ${s}.seq) AS cols`;

// The header and every row's line, in one row (a record has at most one header row: id is its key),
// with the number of segment rows and the framed SHA-256 of their columns in seq order: per row its
// seq and the length of its line (4 bytes each, big-endian), then prev and head framed. The client
// computes the same digest from the chain it decoded, so every column of every row is checked
// without the columns crossing the wire. The bytes come as base64 text rather than bytea's hex: a
// third smaller, so the result of a 20-segment record fits the server's 8 KiB send buffer and
// arrives in one read, and the client decodes it natively (bench/store.bench.ts, cold reads). What
// is decoded is then verified like any other bytes: the encoding is trusted no more than the rows.
const COLD = {
  name: "sbx_read_cold",
  text: `SELECT encode(r.header || coalesce(t.lines, ''::bytea), 'base64') AS b64, length(r.header) AS hl, t.n, t.c
    FROM sbx_records r
    CROSS JOIN LATERAL (SELECT string_agg(s.line, ''::bytea ORDER BY s.seq) AS lines,
                               sha256(coalesce(string_agg(${COLS("s")}, ''::bytea ORDER BY s.seq), ''::bytea)) AS c,
                               count(*) AS n
                          FROM sbx_segments s WHERE s.record = r.id) t
   WHERE r.id = $1`,
};

// The prefix's framed digest and count (rows 1..$2) with every row after it, in one snapshot.
const FULL_TAIL = {
  name: "sbx_read_tail",
  text: `SELECT sha256(${FRAMED("r.header")} || coalesce(p.b, ''::bytea)) AS h, p.n, t.lines AS bytes, t.cols
    FROM sbx_records r
    CROSS JOIN LATERAL (SELECT string_agg(${ROW_FRAMED("s")}, ''::bytea ORDER BY s.seq) AS b, count(*) AS n
                          FROM sbx_segments s WHERE s.record = r.id AND s.seq <= $2) p
    CROSS JOIN LATERAL (SELECT ${LINES_AND_COLS("s")} FROM sbx_segments s WHERE s.record = r.id AND s.seq > $2) t
   WHERE r.id = $1`,
};

// The framed digest of the header and row $2 alone (n: 1 when row $2 exists, 0 otherwise; $2 = 0
// names no row) with every row after it, in one snapshot: two primary-key lookups and a range,
// whatever the length.
const SPOT_TAIL = {
  name: "sbx_read_spot",
  text: `SELECT sha256(${FRAMED("r.header")} || coalesce(${ROW_FRAMED("s")}, ''::bytea)) AS h,
         (s.seq IS NOT NULL)::integer AS n, t.lines AS bytes, t.cols
    FROM sbx_records r
    LEFT JOIN sbx_segments s ON s.record = r.id AND s.seq = $2
    CROSS JOIN LATERAL (SELECT ${LINES_AND_COLS("u")} FROM sbx_segments u WHERE u.record = r.id AND u.seq > $2) t
   WHERE r.id = $1`,
};

function corrupt(id: Digest, what: string): HostError {
  return new HostError("StoreCorrupt", `record ${id}: ${what}`);
}

/**
 * rowCols reads the `cols` of the rows after the first `from` and checks that row k's line, the
 * k-th slice of `lines` from `start` by the stated lengths, is exactly one line (one line feed, at
 * its end) and that the slices cover `lines` to its end. Returns the rows and each line's end.
 */
function rowCols(
  id: Digest,
  cols: Buffer | null,
  lines: Uint8Array,
  start: number,
): { rows: RowCols[]; ends: number[]; hex: string } {
  const rows: RowCols[] = [];
  const ends: number[] = [];
  const c = cols ?? Buffer.alloc(0);
  let at = 0;
  let end = start;
  const bad = (what: string) => corrupt(id, `segment row ${String(rows.length + 1)}: ${what}`);
  const u32 = () => {
    if (at + 4 > c.length) throw bad("columns cut short");
    const v = c.readUInt32BE(at);
    at += 4;
    return v;
  };
  const skip = (n: number) => {
    if (at + n > c.length) throw bad("columns cut short");
    at += n;
    return at - n;
  };
  while (at < c.length) {
    const seq = u32();
    const lineLength = u32();
    const prevLength = u32();
    const prevAt = skip(prevLength);
    const headLength = u32();
    const headAt = skip(headLength);
    const from = end;
    end += lineLength;
    if (end > lines.length || lineLength === 0 || lines.indexOf(LF, from) !== end - 1)
      throw bad("its line is not one line");
    rows.push({ seq, prevAt, prevLength, headAt, headLength });
    ends.push(end);
  }
  if (end !== lines.length) throw corrupt(id, "the lines returned are not the rows' lines");
  // The columns in hex (written natively, once), to compare with the chain's digests.
  return { rows, ends, hex: c.toString("hex") };
}

/** checkColumns holds rows (seq from `from`+1) to the heads the decoder derived from their lines. */
function checkColumns(
  id: Digest,
  record: RunRecord,
  from: number,
  { rows, hex }: { rows: readonly RowCols[]; hex: string },
): void {
  if (record.segments.length !== from + rows.length)
    throw corrupt(
      id,
      `${String(rows.length)} segment rows hold ${String(record.segments.length - from)} lines`,
    );
  const heads = record.heads;
  rows.forEach((row, i) => {
    const n = from + i + 1;
    if (
      row.seq !== n ||
      !sameDigest(hex, row.prevAt, row.prevLength, heads[n - 1]!) ||
      !sameDigest(hex, row.headAt, row.headLength, heads[n]!)
    )
      throw corrupt(id, `segment row ${String(row.seq)} does not match its chain`);
  });
}

// A column equals a chain head when it is that digest's 32 bytes: compared as lower-case hex (the
// digest's own form: "blake3:" and 64 hex digits) at the column's place in the columns' hex.
const sameDigest = (hex: string, at: number, length: number, d: Digest) =>
  length === 32 && d.length === 71 && hex.startsWith(d.slice(7), 2 * at);

/** frame adds one part to a digest: its length (4 bytes, big-endian), then its bytes. */
function frame(h: Hash, part: Uint8Array): void {
  const n = Buffer.allocUnsafe(4);
  n.writeUInt32BE(part.length);
  h.update(n).update(part);
}

/** hashRows adds rows from+1..to of `v` (prev and head from its verified chain) to `h`. */
function hashRows(h: Hash, v: Verified, from: number, to: number): void {
  const heads = v.record.heads;
  for (let i = from + 1; i <= to; i++) {
    frame(h, parseDigest(heads[i - 1]!));
    frame(h, parseDigest(heads[i]!));
    frame(h, v.bytes.subarray(v.ends[i - 1], v.ends[i]));
  }
}

/** fullOf is the framed digest state over the header and every row of `v` (built once, then kept). */
function fullOf(v: Verified): Hash {
  if (v.hash === null) {
    const h = createHash("sha256");
    frame(h, v.bytes.subarray(0, v.ends[0]));
    hashRows(h, v, 0, v.record.segments.length);
    v.hash = h;
  }
  return v.hash;
}

/** spotOf is the framed digest over the header and the last row of `v` alone. */
function spotOf(v: Verified): Buffer {
  if (v.spot === null) {
    const h = createHash("sha256");
    frame(h, v.bytes.subarray(0, v.ends[0]));
    const n = v.record.segments.length;
    if (n > 0) hashRows(h, v, n - 1, n);
    v.spot = h.digest();
  }
  return v.spot;
}

const view = (b: Buffer | null) =>
  b === null ? new Uint8Array() : new Uint8Array(b.buffer, b.byteOffset, b.length);

/**
 * fromGenesis reads a record in one statement and verifies it from genesis; null when absent.
 * The codes are decodeRecord's for the bytes, `GenesisMismatch` for a header of another run,
 * `StoreCorrupt` for a header row that is not one line, or row columns that disagree with the chain.
 */
async function fromGenesis(q: Pool | PoolClient, id: Digest): Promise<Verified | null> {
  const r = await q.query<ReadRow>(COLD, [raw(id)]);
  const row = r.rows[0];
  return row === undefined ? null : verifyCold(id, row);
}

/** verifyCold verifies the row of a read from genesis of record `id` (see fromGenesis). */
function verifyCold(id: Digest, row: ReadRow): Verified {
  const bytes = view(row.b64 === undefined ? null : Buffer.from(row.b64, "base64"));
  const hl = row.hl ?? 0;
  const { record, lineEnds } = decodeRecord(bytes);
  if (record.genesis !== id)
    throw new SandboxAttestError("GenesisMismatch", `record stored as ${id} has genesis ${record.genesis}`);
  if (hl === 0 || lineEnds[0] !== hl) throw corrupt(id, "the header row is not one line");
  const n = record.segments.length;
  if (Number(row.n) !== n) throw corrupt(id, `${String(row.n)} segment rows hold ${String(n)} lines`);
  if (row.c === undefined || !row.c.equals(coldColumns(record, lineEnds)))
    throw corrupt(id, "the segment rows' columns (seq, prev, head, line length) do not match the chain");
  // reads starts at the limit: the first warm read after a verification from genesis is a full one.
  return { record, bytes, ends: lineEnds, hash: null, spot: null, reads: FULL_CHECK_EVERY };
}

// coldColumns is COLD's column digest as the decoded chain says it must be: per segment n, n and
// its line's length (4 bytes each, big-endian), then headₙ₋₁ and headₙ, each as 32 (4 bytes) and
// its 32 bytes.
function coldColumns(record: RunRecord, lineEnds: readonly number[]): Buffer {
  const heads = record.heads;
  const rows = Buffer.allocUnsafe(80 * (heads.length - 1));
  for (let n = 1, at = 0; n < heads.length; n++, at += 80) {
    rows.writeUInt32BE(n, at);
    rows.writeUInt32BE(lineEnds[n]! - lineEnds[n - 1]!, at + 4);
    rows.writeUInt32BE(32, at + 8);
    rows.write(heads[n - 1]!.slice(7), at + 12, 32, "hex");
    rows.writeUInt32BE(32, at + 44);
    rows.write(heads[n]!.slice(7), at + 48, 32, "hex");
  }
  return createHash("sha256").update(rows).digest();
}

/** The statement of a read from genesis ($1: the record id), for the bench to run under pgbench. */
export const COLD_READ_SQL = COLD.text;

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
  /** bytes returns the record's wire bytes (a copy), verified as `record` does, or null when absent. */
  async bytes(id: Digest, opts: { full?: boolean } = {}): Promise<Uint8Array | null> {
    const v = await this.#read(id, opts.full === true);
    return v === null ? null : v.bytes.slice();
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
    const r = await this.#pool.query<ReadRow>(full ? FULL_TAIL : SPOT_TAIL, [raw(id), n]);
    const row = r.rows[0];
    const mine = full ? fullOf(known).copy().digest() : spotOf(known);
    const count = full ? n : Math.min(n, 1);
    if (row?.h === undefined || Number(row.n) !== count || !row.h.equals(mine))
      return this.#rewritten(id, known);
    const lines = view(row.bytes ?? null);
    if (lines.length === 0 && (row.cols ?? null) === null) return known;
    const record = known.record.fork();
    continueRecord(record, lines, 0);
    const { ends, ...cols } = rowCols(id, row.cols ?? null, lines, 0);
    checkColumns(id, record, n, cols);
    const base = known.bytes.length;
    const v: Verified = {
      record,
      bytes: concatBytes(known.bytes, lines),
      ends: [...known.ends, ...ends.map((e) => base + e)],
      hash: null,
      spot: null,
      reads: full ? 0 : known.reads,
    };
    if (known.hash !== null) {
      v.hash = known.hash.copy();
      hashRows(v.hash, v, n, record.segments.length);
    }
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
