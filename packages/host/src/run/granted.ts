// A unit run under grants (jcp §4.2–§4.7, sandbox-attest §5.6): the one run function of `sbx run
// --grant` and of the standing driver's runs (../standing/driver.ts). The grant's sandbox (its
// scopes' binds, its port relays) is opened for the run and closed after it, its budget is the
// run's live check, its exec resources gate the run, and the interval is debited on its ledger.
import type { RunGate } from "../gate/index.ts";
import type { GrantDebit, GrantRun } from "../grants/index.ts";
import { runUnit, type RunUnitOptions, type RunUnitResult } from "./run.ts";

/** What runGranted ran: the interval, and its debit when it ran under a grant. */
export interface GrantedRun {
  readonly result: RunUnitResult;
  readonly debit?: GrantDebit;
}

// The caller's own gate in `o`, as a RunGate (null when the run is not gated).
function givenGate(o: RunUnitOptions): RunGate | null {
  return o.execPolicy === undefined ? null : { execPolicy: o.execPolicy, policy: o.policy };
}

/**
 * runGranted runs `o` (runUnit) under `grant` (openGrantRun), or as it is without one. Under a
 * grant the run's grants_id is the grant's, its sandbox is the one the grant was opened with, with
 * the grant's binds (GrantRun.open; `o.sandbox` must be given too, RangeError), its live check is the grant's budget, and
 * its exec gate is the caller's own (`o.execPolicy`) composed with the grant's /exec/ resources
 * (GrantRun.gateWith: `GateUnavailable` where the grant restricts execution and no gate runs
 * here); after the run the grant's relays are closed and the interval is debited (GrantRun.debit).
 * Throws what runUnit throws, and the ledger's refusals of the debit.
 */
export async function runGranted(o: RunUnitOptions, grant?: GrantRun | null): Promise<GrantedRun> {
  if (grant === undefined || grant === null) return { result: await runUnit(o) };
  if (o.sandbox === undefined) throw new RangeError("runGranted: a run under a grant needs a sandbox");
  const gate = grant.gateWith(givenGate(o));
  const sandbox = await grant.open();
  let result: RunUnitResult;
  try {
    result = await runUnit({
      ...o,
      grantsId: grant.grantsId,
      sandbox,
      live: grant.watch,
      policy: gate?.policy ?? o.policy,
      ...(gate ? { execPolicy: gate.execPolicy } : {}),
    });
  } finally {
    await grant.close();
  }
  return { result, debit: grant.debit(result) };
}
