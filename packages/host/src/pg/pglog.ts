// The append-only log of chained ledgers (../log/logstore.ts) in PostgreSQL, with the folder log's
// semantics and heads: an entry is `<prev head>\n<payload>`, its head the BLAKE3 of those bytes,
// the empty log's head LOG_GENESIS. One row per entry; (log, prev) and (log, seq) are unique, so of
// several writers extending one head exactly one commits and the others get `StaleHead`.
// `update` reads, builds and appends in one transaction holding the log's row lock, so a spend's
// budget check and its debit are one step and racing hosts queue instead of rebuilding.
// Readers recompute every head and refuse a row that does not match (`LogBroken`): the whole log on
// a store's first read of it, then only the entries after the state it holds, the held entries
// checked unchanged by the server's SHA-256 over them (as reader.ts does for run records).
import { createHash, randomUUID, type Hash } from "node:crypto";
import type { Pool, PoolClient } from "pg";
import { digestBytes, formatDigest, parseDigest, type Digest } from "@sbx/wire";
import { HostError } from "../errors.ts";
import { LOG_GENESIS, type LogEntry, type LogState } from "../log/appendlog.ts";
import { checkLogName, logEntryBytes, staleHead, type LogBuilder, type LogStore } from "../log/logstore.ts";
import { isUniqueViolation, tx, withRetry } from "./conn.ts";

const raw = (a: Digest) => Buffer.from(parseDigest(a));
const dig = (b: Buffer) => formatDigest(new Uint8Array(b));
// A column holds digest d: its 32 bytes (a column of another length, however altered, is not d).
const same = (b: Buffer, d: Digest) => b.length === 32 && dig(b) === d;

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
    if (Number(row.seq) !== seq || !same(row.prev, head) || !same(row.head, next))
      throw new HostError("LogBroken", `log ${name}: entry ${String(seq)} does not extend head ${head}`);
    entries.push({ seq, prev: head, payload, head: next });
    head = next;
  }
  return { entries, head };
}

// A log's held prefix checked unchanged (the server's SHA-256 over prev, head and payload of rows
// 1..$2, in seq order, each framed as its length, 4 bytes big-endian, then its bytes, so bytes moved
// across a boundary do not hash alike) and every row after it, in one statement.
const LOG_TAIL = {
  name: "sbx_log_tail",
  text: `WITH p AS (
    SELECT sha256(coalesce(string_agg(int4send(length(prev)) || prev || int4send(length(head)) || head
                                      || int4send(length(payload)) || payload, ''::bytea ORDER BY seq), ''::bytea)) AS h,
           count(*) AS n
      FROM sbx_log_entries WHERE log = $1 AND seq <= $2)
  SELECT p.h, p.n, e.seq, e.prev, e.head, e.payload
    FROM p LEFT JOIN sbx_log_entries e ON e.log = $1 AND e.seq > $2 ORDER BY e.seq`,
};

interface TailRow {
  h: Buffer;
  n: string;
  seq: string | null;
  prev: Buffer | null;
  head: Buffer | null;
  payload: Buffer | null;
}

/** A log state this store verified, and the SHA-256 over its rows so far (LOG_TAIL's form). */
interface Held {
  readonly state: LogState;
  readonly hash: Hash;
}

/** frame adds one part to a digest as LOG_TAIL frames it: its length (4 bytes, big-endian), then its bytes. */
function frame(h: Hash, part: Uint8Array): Hash {
  const n = Buffer.allocUnsafe(4);
  n.writeUInt32BE(part.length);
  return h.update(n).update(part);
}

function hashEntry(h: Hash, prev: Uint8Array, head: Uint8Array, payload: Uint8Array): void {
  frame(frame(frame(h, prev), head), payload);
}

function hashEntries(h: Hash, entries: readonly LogEntry[]): Hash {
  for (const e of entries) hashEntry(h, raw(e.prev), raw(e.head), e.payload);
  return h;
}

/** How many logs one store keeps verified states for (least recently used dropped first). */
const HELD_LOGS = 1024;

/** Many named logs in one PostgreSQL database. */
export class PgLogStore implements LogStore {
  readonly #pool: Pool;
  readonly #retryMs: number;
  readonly #held = new Map<string, Held>();
  constructor(pool: Pool, retryMs: number) {
    this.#pool = pool;
    this.#retryMs = retryMs;
  }

  #keep(name: string, v: Held): void {
    const had = this.#held.get(name);
    if (had !== undefined && had.state.entries.length > v.state.entries.length) return;
    this.#held.delete(name);
    this.#held.set(name, v);
    if (this.#held.size > HELD_LOGS) {
      const oldest = this.#held.keys().next().value;
      if (oldest !== undefined) this.#held.delete(oldest);
    }
  }

  /**
   * verified reads log `name` on `c` verified: from the first entry on this store's first read of
   * it; afterwards only the entries after the held state, each checked to extend the head before it,
   * with the held entries checked unchanged by the server's digest over them. On a mismatch the
   * log is read whole (`LogBroken` for a broken link); one that then verifies to other entries was
   * rewritten (`LogBroken`), and this store keeps refusing it.
   */
  async #verified(c: PoolClient, name: string): Promise<LogState> {
    const held = this.#held.get(name);
    if (held === undefined) {
      const state = await readLogRows(c, name);
      this.#keep(name, { state, hash: hashEntries(createHash("sha256"), state.entries) });
      return state;
    }
    const n = held.state.entries.length;
    const r = await c.query<TailRow>(LOG_TAIL, [name, n]);
    const first = r.rows[0];
    if (first === undefined || Number(first.n) !== n || !first.h.equals(held.hash.copy().digest())) {
      try {
        await readLogRows(c, name); // LogBroken for a broken link, as a fresh reader says
      } finally {
        this.#held.set(name, held); // this store keeps refusing, whatever the log becomes
      }
      throw new HostError(
        "LogBroken",
        `log ${name}: entries this host verified were changed in the database`,
      );
    }
    const entries = [...held.state.entries];
    let head = held.state.head;
    const hash = held.hash.copy();
    for (const row of r.rows) {
      if (row.seq === null) continue;
      const seq = entries.length + 1;
      const payload = new Uint8Array(row.payload!);
      const next = digestBytes(logEntryBytes(head, payload));
      if (Number(row.seq) !== seq || !same(row.prev!, head) || !same(row.head!, next))
        throw new HostError("LogBroken", `log ${name}: entry ${String(seq)} does not extend head ${head}`);
      entries.push({ seq, prev: head, payload, head: next });
      hashEntry(hash, row.prev!, row.head!, row.payload!);
      head = next;
    }
    const state = { entries, head };
    if (entries.length > n) this.#keep(name, { state, hash });
    return state;
  }

  async readLog(name: string): Promise<LogState> {
    checkLogName(name);
    return withRetry("log read", this.#retryMs, () =>
      tx(this.#pool, async (c) => {
        await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        return this.#verified(c, name);
      }),
    );
  }

  async appendLog(name: string, expected: Digest, payload: Uint8Array): Promise<Digest> {
    checkLogName(name);
    return this.#write(name, async (c) => {
      const state = await this.#verified(c, name);
      if (state.head !== expected) throw staleHead(name, state.head, expected);
      return { state, payload, result: null };
    }).then((r) => r.head);
  }

  async update<T>(name: string, build: LogBuilder<T>): Promise<T | null> {
    checkLogName(name);
    const r = await this.#write(name, async (c) => {
      // The log's row lock queues writers: the state read under it stays the head until commit.
      await c.query("SELECT name FROM sbx_logs WHERE name = $1 FOR UPDATE", [name]);
      const state = await this.#verified(c, name);
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
        const state = await this.#verified(c, name);
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
