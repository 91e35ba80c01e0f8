// The append-only log of chained ledgers (../log/logstore.ts) in PostgreSQL, with the folder log's
// semantics and heads: an entry is `<prev head>\n<payload>`, its head the BLAKE3 of those bytes,
// the empty log's head LOG_GENESIS. One row per entry; (log, prev) and (log, seq) are unique, so of
// several writers extending one head exactly one commits and the others get `StaleHead`.
// `update` reads, builds and appends in one transaction holding the log's row lock, so a spend's
// budget check and its debit are one step and racing hosts queue instead of rebuilding.
// Readers recompute every head and refuse a row that does not match (`LogBroken`).
import { randomUUID } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import { digestBytes, formatDigest, parseDigest, type Digest } from "@sbx/wire";
import { HostError } from "../errors.ts";
import { LOG_GENESIS, type LogEntry, type LogState } from "../log/appendlog.ts";
import { checkLogName, logEntryBytes, staleHead, type LogBuilder, type LogStore } from "../log/logstore.ts";
import { isUniqueViolation, tx, withRetry } from "./conn.ts";

const raw = (a: Digest) => Buffer.from(parseDigest(a));
const dig = (b: Buffer) => formatDigest(new Uint8Array(b));

interface EntryRow {
  seq: string;
  prev: Buffer;
  head: Buffer;
  payload: Buffer;
}

/** readLogRows reads and verifies log `name` on `c`: every entry must extend the head before it. */
async function readLogRows(c: PoolClient, name: string): Promise<LogState> {
  const r = await c.query<EntryRow>(
    "SELECT seq, prev, head, payload FROM sbx_log_entries WHERE log = $1 ORDER BY seq",
    [name],
  );
  const entries: LogEntry[] = [];
  let head = LOG_GENESIS;
  for (const row of r.rows) {
    const seq = entries.length + 1;
    const payload = new Uint8Array(row.payload);
    const next = digestBytes(logEntryBytes(head, payload));
    if (Number(row.seq) !== seq || dig(row.prev) !== head || dig(row.head) !== next)
      throw new HostError("LogBroken", `log ${name}: entry ${String(seq)} does not extend head ${head}`);
    entries.push({ seq, prev: head, payload, head: next });
    head = next;
  }
  return { entries, head };
}

/** Many named logs in one PostgreSQL database. */
export class PgLogStore implements LogStore {
  readonly #pool: Pool;
  readonly #retryMs: number;
  constructor(pool: Pool, retryMs: number) {
    this.#pool = pool;
    this.#retryMs = retryMs;
  }

  async readLog(name: string): Promise<LogState> {
    checkLogName(name);
    return withRetry("log read", this.#retryMs, () =>
      tx(this.#pool, async (c) => {
        await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        return readLogRows(c, name);
      }),
    );
  }

  async appendLog(name: string, expected: Digest, payload: Uint8Array): Promise<Digest> {
    checkLogName(name);
    return this.#write(name, async (c) => {
      const state = await readLogRows(c, name);
      if (state.head !== expected) throw staleHead(name, state.head, expected);
      return { state, payload, result: null };
    }).then((r) => r.head);
  }

  async update<T>(name: string, build: LogBuilder<T>): Promise<T | null> {
    checkLogName(name);
    const r = await this.#write(name, async (c) => {
      // The log's row lock queues writers: the state read under it stays the head until commit.
      await c.query("SELECT name FROM sbx_logs WHERE name = $1 FOR UPDATE", [name]);
      const state = await readLogRows(c, name);
      const next = build(state);
      return next === null ? null : { state, payload: next.payload, result: next.result };
    });
    return r.result;
  }

  /**
   * appendMany appends `payloads` in order after `expected` in one transaction (all of them or none):
   * `StaleHead` when the head moved, `LogBroken` when the log does not verify. Returns the head
   * after each entry. For moving a whole ledger (`sbx store copy`): one read of the log, not one per entry.
   */
  async appendMany(name: string, expected: Digest, payloads: readonly Uint8Array[]): Promise<Digest[]> {
    checkLogName(name);
    if (payloads.length === 0) return [];
    const tokens = payloads.map(() => randomUUID());
    const heads: Digest[] = [];
    const attempt = () =>
      tx(this.#pool, async (c) => {
        await c.query("INSERT INTO sbx_logs (name) VALUES ($1) ON CONFLICT DO NOTHING", [name]);
        await c.query("SELECT name FROM sbx_logs WHERE name = $1 FOR UPDATE", [name]);
        const state = await readLogRows(c, name);
        if (state.head !== expected) throw staleHead(name, state.head, expected);
        heads.length = 0;
        let head = state.head;
        let seq = state.entries.length;
        for (let at = 0; at < payloads.length;) {
          const rows: { seq: number; prev: Buffer; head: Buffer; payload: Buffer; token: string }[] = [];
          for (let bytes = 0; at < payloads.length && rows.length < 1000 && bytes < 8 << 20; at++) {
            const p = payloads[at]!;
            const next = digestBytes(logEntryBytes(head, p));
            rows.push({
              seq: ++seq,
              prev: raw(head),
              head: raw(next),
              payload: Buffer.from(p),
              token: tokens[at]!,
            });
            heads.push(next);
            head = next;
            bytes += p.length;
          }
          await c.query(
            "INSERT INTO sbx_log_entries (log, seq, prev, head, payload, token) SELECT $1, s.seq, s.prev, s.head, s.payload, s.token FROM unnest($2::bigint[], $3::bytea[], $4::bytea[], $5::bytea[], $6::uuid[]) AS s(seq, prev, head, payload, token)",
            [
              name,
              rows.map((r) => r.seq),
              rows.map((r) => r.prev),
              rows.map((r) => r.head),
              rows.map((r) => r.payload),
              rows.map((r) => r.token),
            ],
          );
        }
        return [...heads];
      }).catch((e: unknown) => {
        if (isUniqueViolation(e))
          throw new HostError("StaleHead", `log ${name}: another writer extended the head`, { cause: e });
        throw e;
      });
    // All rows commit together: the last one's token found means every one is in.
    const committed = async () => {
      const r = await this.#pool.query("SELECT 1 FROM sbx_log_entries WHERE token = $1", [tokens.at(-1)]);
      return r.rows.length === 0 ? null : [...heads];
    };
    return withRetry("log append", this.#retryMs, attempt, committed);
  }

  // One transaction: `plan` reads (and checks) the log and says what to append; the entry row is
  // inserted on the head it read. A lost connection retries; a committed entry is found by its token.
  #write<T>(
    name: string,
    plan: (c: PoolClient) => Promise<{ state: LogState; payload: Uint8Array; result: T } | null>,
  ): Promise<{ head: Digest; result: T | null }> {
    const token = randomUUID();
    let result: T | null = null;
    const attempt = () =>
      tx(this.#pool, async (c) => {
        await c.query("INSERT INTO sbx_logs (name) VALUES ($1) ON CONFLICT DO NOTHING", [name]);
        const p = await plan(c);
        if (p === null) return { head: LOG_GENESIS, result: null };
        result = p.result;
        const head = digestBytes(logEntryBytes(p.state.head, p.payload));
        await c.query(
          "INSERT INTO sbx_log_entries (log, seq, prev, head, payload, token) VALUES ($1, $2, $3, $4, $5, $6)",
          [name, p.state.entries.length + 1, raw(p.state.head), raw(head), Buffer.from(p.payload), token],
        );
        return { head, result: p.result };
      }).catch((e: unknown) => {
        if (isUniqueViolation(e))
          throw new HostError("StaleHead", `log ${name}: another writer extended the head`, { cause: e });
        throw e;
      });
    const committed = async () => {
      const r = await this.#pool.query<{ head: Buffer }>(
        "SELECT head FROM sbx_log_entries WHERE token = $1",
        [token],
      );
      return r.rows[0] === undefined ? null : { head: dig(r.rows[0].head), result };
    };
    return withRetry("log append", this.#retryMs, attempt, committed);
  }
}
