// Run records in PostgreSQL: a header row and one row per segment (seq, prev, head, line).
//
// Reading: reader.ts (verified from genesis once per reader, then the new rows only).
//
// Appending (RecordWriter): an append needs the record's verified state. A writer keeps, per record,
// the state it verified last and reads only the rows after it (rows are never updated, so a verified
// prefix stays verified); each new row is checked as strictly as decoding would (its segment parsed
// strictly, its line equal byte for byte to the canonical line re-encoded from it, its head recomputed
// and equal to the row's). The first append a writer makes to a record verifies it from genesis.
// Then the insert names the head it extends; UNIQUE (record, prev) and (record, seq) let exactly one
// of several writers commit, the others are told `StaleHead`. No explicit transaction: the single
// INSERT is atomic and the constraint is the decision. A writer extending its own last append makes
// one round trip (the insert); otherwise two (the new rows, then the insert).
import type { Pool } from "pg";
import { bytesEqual, formatDigest, parseDigest, parseStrict, type Digest } from "@sbx/wire";
import {
  decodeRecord,
  encodeSegmentLine,
  parseSegment,
  RunRecord,
  SandboxAttestError,
  segmentHead,
  type Segment,
} from "@sbx/sandbox-attest/runrecord";
import { HostError } from "../errors.ts";
import { faultPoint } from "../store/fault.ts";
import { isUniqueViolation } from "./conn.ts";

const raw = (a: Digest) => Buffer.from(parseDigest(a));
const dig = (b: Buffer) => formatDigest(new Uint8Array(b));
// A column holds digest d: its 32 bytes (a column of another length, however altered, is not d).
const same = (b: Buffer, d: Digest) => b.length === 32 && dig(b) === d;

interface Row {
  header: Buffer;
  seq: number | null;
  prev: Buffer | null;
  head: Buffer | null;
  line: Buffer | null;
}

// Prepared once per connection (named statements): the server parses and plans them once.
const ROWS = {
  name: "sbx_rows_after",
  text: "SELECT r.header, s.seq, s.prev, s.head, s.line FROM sbx_records r LEFT JOIN sbx_segments s ON s.record = r.id AND s.seq > $2 WHERE r.id = $1 ORDER BY s.seq",
};
const INSERT = {
  name: "sbx_append",
  text: "INSERT INTO sbx_segments (record, seq, prev, head, line, token) VALUES ($1, $2, $3, $4, $5, $6)",
};

function corrupt(id: Digest, seq: number): HostError {
  return new HostError("StoreCorrupt", `record ${id}: segment row ${String(seq)} does not match its chain`);
}

/** extend verifies one new row against the verified state and appends it to that state. */
function extend(record: RunRecord, id: Digest, row: Row): void {
  const seq = record.segments.length + 1;
  if (row.seq !== seq || !same(row.prev!, record.head)) throw corrupt(id, row.seq ?? 0);
  const text = new Uint8Array(row.line!);
  let seg: Segment;
  try {
    const o = parseStrict(text.subarray(0, text.length - 1), { maxBytes: text.length, maxDepth: 16 }) as {
      segment?: unknown;
    };
    seg = parseSegment(o.segment);
  } catch (e) {
    throw new SandboxAttestError("BadRecord", `record ${id}: line ${String(seq + 1)} is not a segment line`, {
      cause: e,
    });
  }
  const head = record.append(seg); // the §13.3 checks; the caller drops this state if anything throws
  if (!bytesEqual(encodeSegmentLine(seq, head, seg), text))
    throw new SandboxAttestError(
      "HeadMismatch",
      `record ${id}: line ${String(seq + 1)} is not the line of its segment and head`,
    );
  if (!same(row.head!, head)) throw corrupt(id, seq);
}

/** Verified record states of one writer, by record id, with one operation per record at a time. */
export class RecordWriter {
  readonly #pool: Pool;
  readonly #known = new Map<Digest, RunRecord>();
  readonly #busy = new Map<Digest, Promise<unknown>>();

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  // Appends to one record from one process run one at a time, so the cached state is never shared
  // by two operations; across processes and hosts the database decides.
  #serial<T>(id: Digest, fn: () => Promise<T>): Promise<T> {
    const prev = this.#busy.get(id) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const settled = run.catch(() => undefined);
    this.#busy.set(id, settled);
    void settled.then(() => {
      if (this.#busy.get(id) === settled) this.#busy.delete(id);
    });
    return run;
  }

  /** state reads the rows after the verified prefix and returns the record as it is now. */
  async #state(id: Digest): Promise<RunRecord> {
    const known = this.#known.get(id);
    const r = await this.#pool.query<Row>(ROWS, [raw(id), known?.segments.length ?? 0]);
    const first = r.rows[0];
    if (first === undefined) throw new SandboxAttestError("RecordMissing", `no record ${id}`);
    let record = known;
    if (record === undefined) {
      // As the reader (reader.ts): the header row holds exactly one line, so no segment line moved
      // into it is taken for a row.
      if (first.header.length === 0 || first.header.indexOf(0x0a) !== first.header.length - 1)
        throw new HostError("StoreCorrupt", `record ${id}: the header row is not one line`);
      record = decodeRecord(new Uint8Array(first.header)).record;
      if (record.genesis !== id)
        throw new SandboxAttestError(
          "GenesisMismatch",
          `record stored as ${id} has genesis ${record.genesis}`,
        );
    }
    this.#known.delete(id); // kept again only once every new row verified
    for (const row of r.rows) if (row.seq !== null) extend(record, id, row);
    this.#known.set(id, record);
    return record;
  }

  /** append inserts `seg` on `expected`: `StaleHead` when the head moved or another writer won it. */
  append(id: Digest, expected: Digest, seg: Segment, token: string): Promise<Digest> {
    return this.#serial(id, async () => {
      // When this writer's verified state ends at `expected`, the read is skipped: should any row
      // follow it in the database, that row's prev is `expected` and the insert fails on
      // UNIQUE (record, prev) — StaleHead, exactly as if the row had been read.
      const known = this.#known.get(id);
      const record = known?.head === expected ? known : await this.#state(id);
      if (record.head !== expected)
        throw new SandboxAttestError("StaleHead", `head is ${record.head}, expected ${expected}`);
      record.check(seg);
      const head = segmentHead(record.head, seg);
      const n = record.segments.length + 1;
      faultPoint("pg-insert"); // crash tests: the record read and checked, the row not yet sent
      try {
        await this.#pool.query(INSERT, [
          raw(id),
          n,
          raw(expected),
          raw(head),
          Buffer.from(encodeSegmentLine(n, head, seg)),
          token,
        ]);
      } catch (e) {
        if (isUniqueViolation(e))
          throw new SandboxAttestError("StaleHead", `another writer extended head ${expected}`, { cause: e });
        throw e;
      }
      record.append(seg); // committed: the verified state now ends at `head`
      return head;
    });
  }
}
