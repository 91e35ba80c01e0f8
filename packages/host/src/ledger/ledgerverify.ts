// `jcp verify CHAIN --ledger DIR`: the spend ledger replayed whole (jcp §4.3, "Verifying spend") and
// read for one chain: what each grant on it has spent and has left, so a run's debits (sbx run
// --grant) can be checked against the run's attested energy.
import { SpendLedger, grantStore, type EffectiveGrant, type RevocationIndex } from "@sbx/jcp-grant/grant";
import type { Envelope } from "@sbx/wire";
import { readLedger } from "./ledger.ts";

/** One grant's standing on a ledger. */
export interface GrantStanding {
  readonly address: string;
  readonly budget_uj: string;
  readonly spent_uj: string;
  readonly remaining_uj: string;
}

/** A ledger as verified for one chain: its receipts, the leaf's spend, and every grant's standing. */
export interface LedgerReport {
  readonly receipts: number;
  readonly spent_uj: string;
  readonly grants: readonly GrantStanding[];
}

/**
 * ledgerReport replays the ledger at `path` whole (SpendLedger.replay's codes; BadLedger, LogBroken)
 * with the trusted roots and metering hosts, and reports the standing of each grant of `chain`.
 */
export function ledgerReport(
  path: string,
  chain: readonly EffectiveGrant[],
  opts: { roots: readonly string[]; hosts: readonly string[]; revocations?: RevocationIndex },
): LedgerReport {
  return ledgerReportOf(readLedger(path), chain, opts);
}

/** ledgerReportOf is ledgerReport of a ledger already read (from a folder or a database log). */
export function ledgerReportOf(
  file: { readonly grants: readonly Envelope[]; readonly receipts: readonly Envelope[] },
  chain: readonly EffectiveGrant[],
  opts: { roots: readonly string[]; hosts: readonly string[]; revocations?: RevocationIndex },
): LedgerReport {
  const ledger = SpendLedger.replay(grantStore(file.grants), file.receipts, opts);
  const grants = chain.map((g) => {
    const used = ledger.used(g.address).uj;
    const left = g.budget.uj - used;
    return {
      address: g.address,
      budget_uj: g.budget.uj.toString(),
      spent_uj: used.toString(),
      remaining_uj: (left < 0n ? 0n : left).toString(),
    };
  });
  return { receipts: ledger.count, spent_uj: grants[grants.length - 1]?.spent_uj ?? "0", grants };
}
