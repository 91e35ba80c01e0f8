// Connections to the PostgreSQL store: a pool opened from a postgres:// URL (the `pg` client loaded
// only when a PostgreSQL store is used), transactions, and the retry rule for a lost server.
//
// Retry rule: a statement that fails because the connection or the server went away (a restart, a
// network cut) is retried on a new connection with backoff until `retryMs` has passed, then refused
// with `StoreUnreachable`. A write whose COMMIT was sent but not answered is in doubt: every write
// carries a random token stored in its row, and before trying again the writer looks for its token,
// so an acknowledged write is never lost and a committed one is never written twice.
import type { Pool, PoolClient } from "pg";
import { HostError, isHostError } from "../errors.ts";
import { faultPoint } from "../store/fault.ts";

/** Options for opening a PostgreSQL store. */
export interface PgOptions {
  /** Connections kept open (default 4). */
  readonly max?: number;
  /** How long a write keeps retrying while the server is unreachable (default 30 000 ms). */
  readonly retryMs?: number;
}

/** isPgUrl reports whether `s` is a postgres:// or postgresql:// connection string. */
export function isPgUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//.test(s);
}

/** redactUrl drops a password from a connection string, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/]*):[^@/]*@/, "$1:***@");
}

/** openPool makes a pool for `url`; idle connections that die (a server restart) are dropped quietly. */
export async function openPool(url: string, opts: PgOptions = {}): Promise<Pool> {
  const pg = (await import("pg")).default;
  // allowExitOnIdle: a command ends when its work is done, without waiting for idle connections.
  // idleTimeoutMillis 0: idle connections stay open until the pool ends (at most `max`), and no
  // timer is armed and cleared around every statement.
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 4,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 0,
    allowExitOnIdle: true,
  });
  pool.on("error", () => undefined); // an idle client lost its server: the pool replaces it
  return pool;
}

const NET = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTCONN",
  "EHOSTUNREACH",
  "ENOENT",
]);

/** isConnectionLoss reports whether `e` says the server or the connection went away (worth a retry). */
export function isConnectionLoss(e: unknown): boolean {
  if (!(e instanceof Error) || isHostError(e)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && (NET.has(code) || /^(08|57P0)/.test(code))) return true;
  return /Connection terminated|connection error|Connection ended|timeout exceeded when trying to connect|the database system is (starting up|shutting down|in recovery)/i.test(
    e.message,
  );
}

/** isUniqueViolation reports a unique-constraint refusal (SQLSTATE 23505): another writer won. */
export function isUniqueViolation(e: unknown): boolean {
  return e instanceof Error && (e as { code?: unknown }).code === "23505";
}

/** tx runs `fn` in one transaction on one connection, committing if it returns, rolling back if it throws. */
export async function tx<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (c) => {
    await c.query("BEGIN");
    const out = await fn(c);
    faultPoint("pg-commit"); // crash tests: the transaction's rows written, not committed
    await c.query("COMMIT");
    return out;
  });
}

/**
 * withClient runs `fn` on one pooled connection. A connection that dies while checked out between
 * statements reports on the client, not on a statement: that report is taken here (the next
 * statement fails and is retried), and the connection is discarded rather than reused.
 */
export async function withClient<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  let broken = false;
  const onError = () => {
    broken = true;
  };
  c.on("error", onError);
  try {
    return await fn(c);
  } catch (e) {
    broken ||= isConnectionLoss(e);
    // A failed statement leaves an open transaction aborted: roll it back before reuse.
    if (!broken) await c.query("ROLLBACK").catch(() => (broken = true));
    throw e;
  } finally {
    c.off("error", onError);
    c.release(broken);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * withRetry runs `attempt` until it succeeds, fails for a reason other than a lost connection, or
 * `retryMs` has passed (`StoreUnreachable`). `settled`, when given, runs before each retry and may
 * return the result of an attempt that committed although its answer was lost.
 */
export async function withRetry<T>(
  what: string,
  retryMs: number,
  attempt: () => Promise<T>,
  settled?: () => Promise<T | null>,
): Promise<T> {
  const deadline = Date.now() + retryMs;
  for (let wait = 25, first = true; ; wait = Math.min(wait * 2, 1000), first = false) {
    try {
      if (!first && settled) {
        const done = await settled();
        if (done !== null) return done;
      }
      return await attempt();
    } catch (e) {
      if (!isConnectionLoss(e)) throw e;
      if (Date.now() + wait > deadline)
        throw new HostError(
          "StoreUnreachable",
          `${what}: the PostgreSQL store is unreachable (${(e as Error).message})`,
          {
            cause: e,
          },
        );
      await sleep(wait);
    }
  }
}
