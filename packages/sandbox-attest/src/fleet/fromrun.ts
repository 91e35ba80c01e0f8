// §16.1 A fleet item from a verified run: its id, final head, total energy (receipts + idle, §13.6)
// and close outcome, with the span of time it covers. Derived from what verifyRun already decoded
// and opened, so nothing is read or verified twice.
import { SandboxAttestError } from "../errors.ts";
import type { RunVerification } from "../store/verifyrun.ts";
import type { FleetItem } from "./types.ts";

/** A fleet item and the span of its run: the earliest interval start or segment time, and the close. */
export interface RunFleetItem {
  readonly item: FleetItem;
  readonly start_ms: number;
  readonly end_ms: number;
}

/**
 * fleetItemOfRun makes the fleet item `item` of a verified run (§16.1). Refuses with `BadFleetItem`
 * a run that did not verify, one whose energy is not complete (an attestation not held), and one
 * that is not closed.
 */
export function fleetItemOfRun(run: RunVerification, item: string): RunFleetItem {
  const r = run.record;
  if (!run.valid || r === null)
    throw new SandboxAttestError(
      "BadFleetItem",
      `${item}: ${run.error?.code ?? "invalid"} ${run.error?.message ?? ""}`,
    );
  if (run.energy?.complete !== true)
    throw new SandboxAttestError("BadFleetItem", `${item}: energy not resolvable from the objects held`);
  const last = r.segments[r.segments.length - 1];
  if (last?.kind !== "closed") throw new SandboxAttestError("BadFleetItem", `${item}: the run is not closed`);
  let start = last.at_ms;
  for (const s of r.segments)
    start = Math.min(
      start,
      s.kind === "executed"
        ? (run.attestations.get(s.attestation)?.predicate.interval.start_ms ?? start)
        : s.at_ms,
    );
  return {
    item: { item, head: r.head, energy_uj: run.energy.total_uj, outcome: last.outcome },
    start_ms: start,
    end_ms: last.at_ms,
  };
}
