// A PostgreSQL database for a test file: a fresh database in the cluster SBX_TEST_PG names (CI starts
// one), else a throwaway cluster of our own (startCluster). Never skipped: without PostgreSQL the
// test fails with StoreUnusable naming the package to install.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { PgStore, startCluster, stopCluster } from "../../src/pg/index.ts";

/** A database with the store schema applied, and how to get rid of it. */
export interface TestDb {
  readonly url: string;
  done(): Promise<void>;
}

/** withDatabaseName replaces the database of a connection string. */
export function withDatabaseName(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** testDb makes a fresh, initialised database. */
export async function testDb(): Promise<TestDb> {
  const shared = process.env["SBX_TEST_PG"];
  if (shared !== undefined && shared !== "") {
    const name = `sbx_t_${randomBytes(6).toString("hex")}`;
    const admin = new pg.Client({ connectionString: shared });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = withDatabaseName(shared, name);
    await PgStore.init(url);
    return {
      url,
      done: async () => {
        const a = new pg.Client({ connectionString: shared });
        await a.connect();
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await a.end();
      },
    };
  }
  const c = await startCluster();
  await PgStore.init(c.url);
  return {
    url: c.url,
    done: () => {
      stopCluster(c);
      return Promise.resolve();
    },
  };
}

/** sql runs one statement on `url` (a test altering rows by hand). */
export async function sql(url: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(text, params);
  } finally {
    await c.end();
  }
}
