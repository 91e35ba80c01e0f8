// §13.6 Energy honesty: a run's total is the sum over its executed segments' receipts plus the idle
// energy of every resume; both parts are reported, and idle energy keeps its provenance.
import { addAmounts, type Amount, type Digest } from "@sbx/wire";
import type { Provenance, Segment } from "./segment.ts";

/** The energy of a run, split into active and idle, with idle energy by provenance. */
export interface RunEnergy {
  /** Sum of the active energy of every executed segment whose attestation was resolved. */
  readonly active_uj: Amount;
  /** Sum of `idle_uj` over every resumed segment. */
  readonly idle_uj: Amount;
  /** active_uj + idle_uj; a lower bound while `unresolved` is not empty. */
  readonly total_uj: Amount;
  readonly idle_by_provenance: Readonly<Record<Provenance, Amount>>;
  /** Attestations whose active energy could not be resolved (their segments are not counted). */
  readonly unresolved: readonly Digest[];
  /** True when every executed segment was resolved, so total_uj is the run's total. */
  readonly complete: boolean;
}

/** The active energy an executed segment's attestation binds, or null when it cannot be resolved. */
export type ActiveEnergyOf = (attestation: Digest) => Amount | null;

/**
 * runEnergy sums a run's energy (§13.6): active energy from each executed segment's attestation via
 * `activeOf`, idle energy from each resumed segment. Throws `AmountOverflow` (WireError) past 2^64 − 1.
 */
export function runEnergy(segments: readonly Segment[], activeOf: ActiveEnergyOf): RunEnergy {
  let active: Amount = "0";
  const idle: Record<Provenance, Amount> = { measured: "0", attributed: "0", estimated: "0" };
  const unresolved: Digest[] = [];
  for (const s of segments) {
    if (s.kind === "executed") {
      const uj = activeOf(s.attestation);
      if (uj === null) unresolved.push(s.attestation);
      else active = addAmounts(active, uj);
    } else if (s.kind === "resumed") idle[s.idle_provenance] = addAmounts(idle[s.idle_provenance], s.idle_uj);
  }
  const idleUj = addAmounts(idle.measured, idle.attributed, idle.estimated);
  return {
    active_uj: active,
    idle_uj: idleUj,
    total_uj: addAmounts(active, idleUj),
    idle_by_provenance: idle,
    unresolved,
    complete: unresolved.length === 0,
  };
}
