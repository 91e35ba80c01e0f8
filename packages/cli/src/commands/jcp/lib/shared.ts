// jcp ledgers on the PostgreSQL store many hosts share (issue 18): with `--store postgres://…`, a
// spend ledger (`--ledger NAME`) and a revocation list (`--list NAME`, `--revocations NAME`) are
// named logs in that database (PgLogStore) instead of folders. A spend replays and verifies the
// ledger, checks every budget and appends its receipt in one transaction under the log's row lock
// (ledgerstore.ts spendOnLog), so the debit and the append cannot be separated and racing hosts
// queue instead of passing a budget; a revoke verifies the list and appends its entry the same way.
import type { LedgerOptions, SpendRequest } from "@sbx/jcp-grant/grant";
import { RevocationList } from "@sbx/jcp-grant/grant";
import { isPgUrl, PgStore } from "@sbx/host/pg";
import type { LogState, LogStore } from "@sbx/host/log";
import { canonicalBytes, parseStrict, type Envelope, type KeyPair } from "@sbx/wire";
import { printJson, UsageError, type Io } from "../../../command.ts";
import { CliError } from "../../../errors.ts";
import { ledgerOf, spendOnLog } from "@sbx/host/ledger";

/** The help line of the option. */
export const STORE_HELP = `  --store URL         keep the ledger and lists in the PostgreSQL store at URL (postgres://…),
                      shared by many hosts: --ledger, --list and --revocations then name logs there`;

/** sharedUrl reads `--store`: a postgres:// connection string, or undefined when absent. */
export function sharedUrl(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!isPgUrl(v)) throw new UsageError("--store takes a postgres:// connection string");
  return v;
}

/** withShared opens the store at `url`, runs `fn` on its logs, and closes it. */
export async function withShared<T>(url: string, fn: (logs: LogStore) => Promise<T>): Promise<T> {
  const s = await PgStore.open(url);
  try {
    return await fn(s.logs);
  } finally {
    await s.close();
  }
}

function listOf(name: string, state: LogState): RevocationList {
  const values = state.entries.map((e) => {
    try {
      return parseStrict(e.payload, { maxBytes: 1 << 20, maxDepth: 64 });
    } catch (err) {
      throw new CliError("BadLedger", `${name}: entry ${String(e.seq)} is not JSON`, { cause: err });
    }
  });
  return RevocationList.verify(values);
}

/** readSharedList reads and verifies revocation list `name` (an empty list when there is none). */
export async function readSharedList(logs: LogStore, name: string): Promise<RevocationList> {
  return listOf(name, await logs.readLog(name));
}

/** revokeShared appends a revocation of `chain`'s leaf to list `name` in one transaction. */
export async function revokeShared(
  logs: LogStore,
  name: string,
  chain: readonly unknown[],
  key: KeyPair,
  atMs: number,
): Promise<{ list: RevocationList; entry: Envelope }> {
  const r = await logs.update(name, (state) => {
    const list = listOf(name, state);
    const entry = list.revoke(chain, key, atMs);
    return { payload: canonicalBytes(entry), result: { list, entry } };
  });
  if (r === null) throw new Error("unreachable: the builder always appends");
  return r;
}

/** What `jcp spend --store URL` was given, resolved by spend.ts. */
export interface SharedSpend {
  readonly url: string;
  readonly ledger: string;
  readonly revocations: string | undefined;
  readonly chain: readonly Envelope[];
  readonly host: KeyPair;
  readonly req: SpendRequest;
  readonly opts: LedgerOptions;
  readonly atMs: () => number;
  readonly json: boolean;
}

/** spendSharedCommand is `jcp spend --store URL`: the spend, then spend.ts's output. */
export async function spendSharedCommand(s: SharedSpend, io: Io): Promise<void> {
  const ledger = await withShared(s.url, async (logs) => {
    const opts =
      s.revocations === undefined
        ? s.opts
        : { ...s.opts, revocations: await readSharedList(logs, s.revocations) };
    return spendOnLog(logs, s.ledger, s.chain, s.host, s.req, opts, s.atMs);
  });
  const remaining = Object.fromEntries(ledger.remaining());
  if (s.json) printJson(io, { receipts: ledger.count, remaining, retries: 0 });
  else {
    io.out(`spend recorded (receipt ${ledger.count}); remaining:`);
    for (const [a, r] of ledger.remaining())
      io.out(
        `  ${a}  ${r.uj} µJ${r.calls === null ? "" : `, ${r.calls} calls`}${r.wall_ms === null ? "" : `, ${r.wall_ms} ms`}`,
      );
  }
}

/**
 * readSharedLedger reads, from the database at `url`, spend ledger `ledger` (its grants and
 * receipts, every entry's head checked: `LogBroken`) and revocation list `revocations` (verified),
 * each when named.
 */
export function readSharedLedger(
  url: string,
  ledger: string | undefined,
  revocations: string | undefined,
): Promise<{
  ledger: { grants: Envelope[]; receipts: Envelope[] } | null;
  revocations: RevocationList | undefined;
}> {
  return withShared(url, async (logs) => ({
    ledger: ledger === undefined ? null : ledgerOf(ledger, await logs.readLog(ledger)),
    revocations: revocations === undefined ? undefined : await readSharedList(logs, revocations),
  }));
}
