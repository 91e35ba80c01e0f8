// A claimed unit governed by a JCP grant chain (jcp §4.2–§4.4 on a §15.4 claim) as `runGranted`
// governs a cold one: the chain verified now, grants_id bound into the unit, the claim and every
// attestation, the budget enforced live, and the interval debited on the grant's ledger citing its
// attestation and first energy receipt. That receipt's total includes the claim's `warmpool`
// components (sandbox-attest §15.4), so the one debit pays the item's provisioning and residency
// with the unit's own energy (jcp §4.3 "What a receipt pays for").
//
// A parked item's sandbox was built when the pool was created: it cannot take host binds, a port
// relay, a read-only workspace or an exec gate afterwards. A grant that asks for any of them is
// refused before anything is claimed (fail closed: the unit never runs with more than its grant
// gives); a cold run under the grant builds a sandbox with them.
import { HostError } from "../errors.ts";
import { budgetWatch, type BudgetWatch, type GrantDebit, type GrantRun } from "../grants/index.ts";
import type { RunUnitResult } from "../run/index.ts";

/** The workspace a claim's grant is opened with: a placeholder, the parked sandbox's is the one used. */
export const CLAIM_WORKSPACE = "/nonexistent/pool-item";

function unclaimable(what: string): HostError {
  return new HostError("PoolGrantUnsupported", `the grant ${what}; use sbx run --grant`);
}

/**
 * checkClaimGrant refuses (`PoolGrantUnsupported`), before anything is claimed, a grant whose leaf
 * needs more than a parked sandbox has: a loopback port, a program allowlist, host paths besides
 * the workspace, a read-only workspace. `grant` is opened (openGrantRun) with CLAIM_WORKSPACE.
 */
export async function checkClaimGrant(grant: GrantRun): Promise<void> {
  if (grant.ports.length > 0) throw unclaimable("reaches loopback ports: a parked pool sandbox has no relay");
  if (grant.gateWith(null) !== null)
    throw unclaimable("names the programs the unit may run: a parked pool sandbox has no exec gate");
  // No ports: open() starts nothing and returns the sandbox options the grant asks for.
  const o = await grant.open();
  await grant.close();
  if ((o.binds?.length ?? 0) > 0)
    throw unclaimable("binds host paths besides the workspace: a parked pool sandbox has none");
  if (o.workspaceReadOnly === true)
    throw unclaimable("gives the workspace read-only: a parked pool sandbox's workspace is writable");
}

/**
 * claimWatch is the live check of a claimed unit: the budget it may draw is what is left along the
 * chain less the claim's charge (`charge_uj`, the warmpool components its first receipt will carry),
 * so the one debit of the receipt's total fits the budget as a cold run's does. A ledger that
 * cannot be read leaves no budget (fail closed).
 */
export function claimWatch(grant: GrantRun, charge_uj: bigint): BudgetWatch {
  return budgetWatch(() => {
    try {
      return grant.ledger.remaining() - charge_uj;
    } catch {
      return 0n;
    }
  }, grant.watch.periodMs);
}

/** debitClaim debits the claimed unit's interval (receipt total, residency included) on the grant. */
export function debitClaim(grant: GrantRun, watch: BudgetWatch, r: RunUnitResult): GrantDebit {
  const d = grant.debit(r);
  return { ...d, period_ms: watch.periodMs, max_period_uj: watch.maxPeriodUj().toString() };
}
