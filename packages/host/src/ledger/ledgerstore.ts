// A spend ledger (jcp §4.3) kept in any LogStore — a folder of logs or the PostgreSQL store many
// hosts share — with the entry form of commands/jcp/lib/ledger.ts: `{grants, receipt}` per entry.
// A spend replays and verifies the ledger, checks every budget on the chain and appends its receipt
// in one LogStore.update: on PostgreSQL that is one transaction under the log's lock, so the debit
// and the ledger append cannot be separated and racing hosts never pass a budget.
import { grantStore, SpendLedger, type LedgerOptions, type SpendRequest } from "@sbx/jcp-grant/grant";
import type { LogState, LogStore } from "../log/index.ts";
import { canonicalBytes, parseStrict, type Envelope, type KeyPair } from "@sbx/wire";
import { HostError } from "../errors.ts";

/** ledgerOf reads the grants and receipts of a log's entries (`BadLedger` for a malformed entry). */
export function ledgerOf(name: string, state: LogState): { grants: Envelope[]; receipts: Envelope[] } {
  const grants: Envelope[] = [];
  const receipts: Envelope[] = [];
  for (const e of state.entries) {
    let o: { grants?: unknown; receipt?: unknown } | null;
    try {
      o = parseStrict(e.payload, { maxBytes: 1 << 20, maxDepth: 64 }) as typeof o;
    } catch (err) {
      throw new HostError("BadLedger", `${name}: entry ${String(e.seq)} is not JSON`, { cause: err });
    }
    if (
      !o ||
      typeof o !== "object" ||
      !Array.isArray(o.grants) ||
      !o.receipt ||
      typeof o.receipt !== "object"
    )
      throw new HostError("BadLedger", `${name}: entry ${String(e.seq)} is not {grants, receipt}`);
    grants.push(...(o.grants as Envelope[]));
    receipts.push(o.receipt as Envelope);
  }
  return { grants, receipts };
}

/** replayLedger verifies a whole ledger log (every receipt, signature, position and budget). */
export async function replayLedger(logs: LogStore, name: string, opts: LedgerOptions): Promise<SpendLedger> {
  const { grants, receipts } = ledgerOf(name, await logs.readLog(name));
  return SpendLedger.replay(grantStore(grants), receipts, opts);
}

/**
 * spendOnLog records one spend under `chain`'s leaf in ledger `name`: the ledger is replayed and
 * verified, the spend checked against every budget on the chain (`Overspend`, `Expired`, `Revoked`…
 * refuse it and nothing is appended) and its receipt appended on the head it was checked against.
 * Returns the ledger after the spend.
 */
export async function spendOnLog(
  logs: LogStore,
  name: string,
  chain: readonly Envelope[],
  host: KeyPair,
  req: SpendRequest,
  opts: LedgerOptions,
  atMs: () => number = Date.now,
): Promise<SpendLedger> {
  const r = await logs.update(name, (state) => {
    const { grants, receipts } = ledgerOf(name, state);
    const ledger = SpendLedger.replay(grantStore(grants), receipts, opts);
    const receipt = ledger.spend(chain, host, req, atMs());
    const known = grantStore(grants);
    const fresh = [...grantStore(chain).entries()].filter(([a]) => !known.has(a)).map(([, g]) => g);
    return { payload: canonicalBytes({ grants: fresh, receipt }), result: ledger };
  });
  if (r === null) throw new Error("unreachable: the builder always appends");
  return r;
}
