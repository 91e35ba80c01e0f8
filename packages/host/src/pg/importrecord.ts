// A whole run record written into PostgreSQL in one transaction (`sbx import`, §13.10 into a
// database): readers see the record absent, as it was, or whole — never a part of it.
//
// The record's bytes must already be verified (openRunArchive verifies the archive from genesis).
// In one transaction: the header row is inserted when absent, then locked (FOR UPDATE: a host
// appending to the same record waits, its foreign-key check needs that row, so nothing lands
// between the comparison and the insert); the rows already there must be the header and a prefix of
// the record's rows byte for byte (`RecordExists` otherwise, nothing written); the missing rows are
// inserted; then COMMIT. A connection lost on the way is retried as the store's reads are: the
// operation is idempotent (a committed attempt leaves nothing to add).
import { randomUUID } from "node:crypto";
import { bytesEqual, concatBytes, parseDigest, type Digest } from "@sbx/wire";
import { decodeRecord, encodeSegmentLine, SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { faultPoint } from "../store/fault.ts";
import { tx, withRetry } from "./conn.ts";
import type { PgStore } from "./pgstore.ts";

const raw = (a: Digest) => Buffer.from(parseDigest(a));

interface HeldRow {
  seq: number;
  prev: Buffer;
  head: Buffer;
  line: Buffer;
}

/** What importRecord did: whether the header row was new, and how many segment rows it added. */
export interface RecordImport {
  readonly created: boolean;
  readonly added: number;
}

/**
 * importRecord writes the verified record `bytes` into `store` in one transaction (see the file
 * comment): `RecordExists` when the database holds a record of that id that is not a prefix of it;
 * `BadRecord` when the bytes are not the canonical form of their record.
 */
export async function importRecord(store: PgStore, bytes: Uint8Array): Promise<RecordImport> {
  const { record } = decodeRecord(bytes);
  const id = record.genesis;
  const nl = bytes.indexOf(0x0a);
  const header = bytes.subarray(0, nl + 1);
  const lines = record.segments.map((seg, i) => encodeSegmentLine(i + 1, record.heads[i + 1]!, seg));
  if (nl < 0 || !bytesEqual(concatBytes(header, ...lines), bytes))
    throw new SandboxAttestError("BadRecord", `record ${id} is not in its canonical form`);
  const exists = (what: string) =>
    new SandboxAttestError("RecordExists", `the store holds another record ${id}: ${what}`);
  return withRetry("record import", store.retryMs, () =>
    tx(store.pool, async (c) => {
      const ins = await c.query(
        "INSERT INTO sbx_records (id, header) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        [raw(id), Buffer.from(header)],
      );
      const h = await c.query<{ header: Buffer }>("SELECT header FROM sbx_records WHERE id = $1 FOR UPDATE", [
        raw(id),
      ]);
      const held = h.rows[0]?.header;
      if (held === undefined || !bytesEqual(new Uint8Array(held), header)) throw exists("another header");
      const r = await c.query<HeldRow>(
        "SELECT seq, prev, head, line FROM sbx_segments WHERE record = $1 ORDER BY seq",
        [raw(id)],
      );
      if (r.rows.length > lines.length)
        throw exists(`${String(r.rows.length)} segments, the archive's ${String(lines.length)}`);
      r.rows.forEach((row, i) => {
        const same =
          row.seq === i + 1 &&
          row.prev.equals(raw(record.heads[i]!)) &&
          row.head.equals(raw(record.heads[i + 1]!)) &&
          bytesEqual(new Uint8Array(row.line), lines[i]!);
        if (!same) throw exists(`segment ${String(i + 1)} differs`);
      });
      for (let i = r.rows.length; i < lines.length; i++) {
        faultPoint("pg-import-row"); // crash tests: some of the record's rows sent, not committed
        await c.query(
          "INSERT INTO sbx_segments (record, seq, prev, head, line, token) VALUES ($1, $2, $3, $4, $5, $6)",
          [
            raw(id),
            i + 1,
            raw(record.heads[i]!),
            raw(record.heads[i + 1]!),
            Buffer.from(lines[i]!),
            randomUUID(),
          ],
        );
      }
      return { created: ins.rowCount === 1, added: lines.length - r.rows.length };
    }),
  );
}
