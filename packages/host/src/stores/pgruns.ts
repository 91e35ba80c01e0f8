// The reading commands on a PostgreSQL run store (issue 18): `sbx runs`, `show`, `verify RUN` and
// `report RUN` read each run straight from the database, the record by the database reader (verified
// from genesis) and every object its verification asks for fetched into memory and checked there
// (@sbx/host/pg runview.ts), so nothing is copied into a local store and nothing is trusted because
// it came from the database.
import { PgStore, redactUrl } from "../pg/index.ts";
import type { Digest } from "@sbx/wire";
import { resolveRunIn } from "./runref.ts";

/** withPg opens the PostgreSQL store at `url` for `fn` and closes it after. */
export async function withPg<T>(url: string, fn: (pg: PgStore) => Promise<T>): Promise<T> {
  const pg = await PgStore.open(url);
  try {
    return await fn(pg);
  } finally {
    await pg.close();
  }
}

/** resolvePgRun finds the one run `ref` names in the database (`RunNotFound`, `RunAmbiguous`). */
export async function resolvePgRun(pg: PgStore, ref: string | undefined): Promise<Digest> {
  return resolveRunIn(await pg.listRecords(), ref, redactUrl(pg.url));
}
