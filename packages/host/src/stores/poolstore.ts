// Where `sbx pool …` keeps a pool's ledger (sandbox-attest §15.7.1): with a PostgreSQL store selected
// (`--store postgres://…` or SBX_STORE), the ledger is the log `pool/<pool_id>` in that database
// (logStoreLedger over the store's PgLogStore), and the pool's folder (pool.json, items: this host's
// processes) stays local, `--pool NAME` naming hostLocalDir()/pools/NAME; otherwise the ledger is the
// pool's log folder, as it always was, and `--pool NAME` is <store>/pools/NAME.
import { join } from "node:path";
import { PgStore } from "../pg/index.ts";
import { folderLedger, logStoreLedger, type PoolLedger } from "../pool/index.ts";
import { hostLocalDir, runStoreDir, runStoreUrl } from "./runstore.ts";

/** The folder under which `--pool NAME` lives, and where the default host key is (host-key.pem). */
export function poolStoreDir(given: string | undefined): string {
  return runStoreUrl(given) !== null ? hostLocalDir() : runStoreDir(given);
}

/** poolsDir is the folder of named pools (`--pool NAME` is poolsDir/NAME). */
export function poolsDir(given: string | undefined): string {
  return join(poolStoreDir(given), "pools");
}

/**
 * withPoolLedger runs `fn` on the ledger of the pool in folder `dir` in the selected store: the
 * PostgreSQL store's log (connections ended after `fn`), or the pool's log folder.
 */
export async function withPoolLedger<T>(
  dir: string,
  given: string | undefined,
  fn: (ledger: PoolLedger) => Promise<T>,
): Promise<T> {
  const url = runStoreUrl(given);
  if (url === null) return fn(folderLedger(dir));
  const pg = await PgStore.open(url);
  try {
    return await fn(logStoreLedger(dir, pg.logs));
  } finally {
    await pg.close();
  }
}
