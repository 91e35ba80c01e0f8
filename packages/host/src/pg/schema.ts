// The PostgreSQL store's schema, as numbered migrations applied in order by `sbx store init`
// (migrate) and checked by every opener (checkSchema). Migrations run in one transaction under an
// advisory lock, so two hosts initialising at once apply each once. Addresses are 32 raw bytes.
//
// Races are decided by constraints, not by code: a segment row's (record, prev) and (record, seq)
// are unique, so of several writers extending one head exactly one commits; likewise a log entry's
// (log, prev) and (log, seq). Rows are never updated: readers re-derive every head and refuse a row
// that does not match the chain.
import type { PoolClient } from "pg";
import { HostError } from "../errors.ts";

/** The migrations, index 0 being version 1. Never edit one that has shipped: add the next. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sbx_chunks (
     address bytea PRIMARY KEY CHECK (length(address) = 32),
     data bytea NOT NULL);
   CREATE TABLE sbx_objects (
     address bytea PRIMARY KEY CHECK (length(address) = 32),
     size bigint NOT NULL CHECK (size >= 0),
     chunks integer NOT NULL CHECK (chunks >= 0));
   CREATE TABLE sbx_object_chunks (
     address bytea NOT NULL REFERENCES sbx_objects,
     seq integer NOT NULL,
     chunk bytea NOT NULL REFERENCES sbx_chunks,
     PRIMARY KEY (address, seq));
   CREATE TABLE sbx_signed (
     address bytea PRIMARY KEY CHECK (length(address) = 32),
     envelope bytea NOT NULL);
   CREATE TABLE sbx_records (
     id bytea PRIMARY KEY CHECK (length(id) = 32),
     header bytea NOT NULL);
   CREATE TABLE sbx_segments (
     record bytea NOT NULL REFERENCES sbx_records,
     seq integer NOT NULL CHECK (seq >= 1),
     prev bytea NOT NULL,
     head bytea NOT NULL,
     line bytea NOT NULL,
     token uuid NOT NULL UNIQUE,
     PRIMARY KEY (record, seq),
     UNIQUE (record, prev));
   CREATE TABLE sbx_logs (
     name text PRIMARY KEY);
   CREATE TABLE sbx_log_entries (
     log text NOT NULL REFERENCES sbx_logs,
     seq bigint NOT NULL CHECK (seq >= 1),
     prev bytea NOT NULL,
     head bytea NOT NULL,
     payload bytea NOT NULL,
     token uuid NOT NULL UNIQUE,
     PRIMARY KEY (log, seq),
     UNIQUE (log, prev));`,
];

/** The schema version this code reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

// Any fixed 64-bit number: the advisory lock that serialises migrations across hosts.
const MIGRATION_LOCK = 7_305_118_226_001;

async function currentVersion(c: PoolClient): Promise<number> {
  const t = await c.query<{ t: string | null }>("SELECT to_regclass('sbx_schema')::text AS t");
  if (t.rows[0]?.t == null) return 0;
  const r = await c.query<{ v: number | null }>("SELECT max(version) AS v FROM sbx_schema");
  return r.rows[0]?.v ?? 0;
}

/**
 * migrate applies every migration newer than the database's version, in one transaction under the
 * advisory lock, and returns [version before, version after]. `StoreUnusable` when the
 * database is at a newer version than this code knows.
 */
export async function migrate(c: PoolClient): Promise<[number, number]> {
  await c.query("BEGIN");
  try {
    await c.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await c.query(
      "CREATE TABLE IF NOT EXISTS sbx_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const before = await currentVersion(c);
    if (before > SCHEMA_VERSION) throw newerSchema(before);
    for (let v = before + 1; v <= SCHEMA_VERSION; v++) {
      await c.query(MIGRATIONS[v - 1] as string);
      await c.query("INSERT INTO sbx_schema (version) VALUES ($1)", [v]);
    }
    await c.query("COMMIT");
    return [before, SCHEMA_VERSION];
  } catch (e) {
    await c.query("ROLLBACK").catch(() => undefined);
    throw e;
  }
}

function newerSchema(v: number): HostError {
  return new HostError(
    "StoreUnusable",
    `the database's store schema is version ${String(v)}, newer than this sbx (${String(SCHEMA_VERSION)})`,
  );
}

/** checkSchema refuses a database whose schema is not this code's version (`StoreUnusable`). */
export async function checkSchema(c: PoolClient): Promise<void> {
  const v = await currentVersion(c);
  if (v > SCHEMA_VERSION) throw newerSchema(v);
  if (v < SCHEMA_VERSION)
    throw new HostError(
      "StoreUnusable",
      `the database's store schema is version ${String(v)}, this sbx needs ${String(SCHEMA_VERSION)}: run sbx store init --store URL`,
    );
}
