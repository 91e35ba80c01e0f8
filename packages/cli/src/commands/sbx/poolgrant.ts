// `sbx pool claim --grant CHAIN`: a claimed unit governed by a JCP grant chain as `sbx run --grant`
// governs a cold one (grant.ts): the chain verified now against --trust, grants_id bound into the
// unit, the claim and every attestation, the budget enforced live, and the interval debited on
// --ledger citing its attestation and first energy receipt. That receipt's total includes the
// claim's `warmpool` components (sandbox-attest §15.4), so the one debit pays the item's
// provisioning and residency with the unit's own energy (jcp §4.3 "What a receipt pays for").
//
// A parked item's sandbox was built when the pool was created: it cannot take host binds, a port
// relay, a read-only workspace or an exec gate afterwards. A grant that asks for any of them is
// refused before anything is claimed (fail closed: the unit never runs with more than its grant
// gives); `sbx run --grant` builds a sandbox with them.
import type { KeyPair } from "@sbx/wire";
import { UsageError } from "../../command.ts";
import { budgetWatch, type BudgetWatch } from "@sbx/host/grants";
import type { RunUnitResult } from "@sbx/host/run";
import type { GrantDebit, GrantRun } from "@sbx/host/grants";
import { prepareGrantRun } from "../../flags/grant.ts";

/**
 * preparePoolGrant reads --grant and its companions for a claim (null without --grant). Refuses, as
 * a usage error and before the claim, --grants with --grant, and a grant whose leaf needs more than
 * the parked sandbox has (host paths besides the workspace, a loopback port, a read-only workspace,
 * a program allowlist); every refusal of prepareGrantRun otherwise (chain codes, BudgetExhausted).
 */
export async function preparePoolGrant(v: Record<string, unknown>, key: KeyPair): Promise<GrantRun | null> {
  if (v.grant === undefined) return null;
  if (v.grants !== undefined) throw new UsageError("--grant computes grants_id: drop --grants");
  // The workspace path is a placeholder: the grant's map is judged, the parked sandbox is the one used.
  const grant = prepareGrantRun(v, key, true, { workspace: "/nonexistent/pool-item" });
  if (grant === null) return null;
  if (grant.ports.length > 0)
    throw new UsageError(
      "the grant reaches loopback ports: a parked pool sandbox has no relay; use sbx run --grant",
    );
  if (grant.gateWith(null) !== null)
    throw new UsageError(
      "the grant names the programs the unit may run: a parked pool sandbox has no exec gate; use sbx run --grant",
    );
  // No ports: open() starts nothing and returns the sandbox options the grant asks for.
  const o = await grant.open();
  await grant.close();
  if ((o.binds?.length ?? 0) > 0)
    throw new UsageError(
      "the grant binds host paths besides the workspace: a parked pool sandbox has none; use sbx run --grant",
    );
  if (o.workspaceReadOnly === true)
    throw new UsageError(
      "the grant gives the workspace read-only: a parked pool sandbox's workspace is writable; use sbx run --grant",
    );
  return grant;
}

/**
 * claimWatch is the live check of a claimed unit: the budget it may draw is what is left along the
 * chain less the claim's charge (`charge_uj`, the warmpool components its first receipt will carry),
 * so the one debit of the receipt's total fits the budget as `sbx run --grant`'s does. A ledger
 * that cannot be read leaves no budget (fail closed).
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
