// §15.7.1 Where a pool's ledger lives. A pool's folder (pool.json, items) is always this host's; its
// ledger is the log folder `<dir>/ledger/` with the file store, or a log in the selected LogStore
// (PostgreSQL) named after the descriptor. A pool whose ledger is in a LogStore holds the marker
// `<dir>/ledger-at.json` ({"store":"log-store","log":NAME}, written before pool.json), so that opening
// it against the folder (no store or a file store selected) is refused, never read as an empty ledger;
// and a pool that holds a ledger folder is refused with a LogStore selected (ledger.ts). Fail closed
// both ways: an empty ledger would hide every item and its energy.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";

/** The marker of a pool whose ledger is a log in a LogStore. */
export function ledgerAtPath(dir: string): string {
  return join(dir, "ledger-at.json");
}

/** refuseLedgerElsewhere refuses (`PoolLedgerElsewhere`) a pool whose ledger is in a LogStore. */
export function refuseLedgerElsewhere(dir: string): void {
  if (existsSync(ledgerAtPath(dir)))
    throw new HostError(
      "PoolLedgerElsewhere",
      `${dir}: this pool's ledger is a log in a shared store (${ledgerAtPath(dir)}); select that store ` +
        `(--store postgres://… or SBX_STORE)`,
    );
}
