// §4.3 Budgets: microjoules (a 64-bit decimal string on the wire), and optionally a number of calls
// and wall-clock milliseconds. A limit a root leaves out is unlimited; one a child leaves out is
// its parent's, so leaving a field out never widens.
import { formatAmount } from "@sbx/wire";

/** A budget as resolved for one grant: `null` means no limit in that dimension. */
export interface Budget {
  readonly uj: bigint;
  readonly calls: number | null;
  readonly wall_ms: number | null;
}

/** What one spend consumes, or what has been consumed so far. */
export interface Usage {
  readonly uj: bigint;
  readonly calls: number;
  readonly wall_ms: number;
}

/** The usage of nothing. */
export const ZERO_USAGE: Usage = { uj: 0n, calls: 0, wall_ms: 0 };

function limitWithin(child: number | null, parent: number | null): boolean {
  return parent === null || (child !== null && child <= parent);
}

/** budgetWithin reports whether `child` is nowhere above `parent` (§4.3): uj, calls and wall time. */
export function budgetWithin(child: Budget, parent: Budget): boolean {
  return (
    child.uj <= parent.uj &&
    limitWithin(child.calls, parent.calls) &&
    limitWithin(child.wall_ms, parent.wall_ms)
  );
}

/** addUsage sums two usages. */
export function addUsage(a: Usage, b: Usage): Usage {
  return { uj: a.uj + b.uj, calls: a.calls + b.calls, wall_ms: a.wall_ms + b.wall_ms };
}

/** usageWithin reports whether a total usage stays inside a budget in every dimension (§4.3). */
export function usageWithin(used: Usage, budget: Budget): boolean {
  return (
    used.uj <= budget.uj &&
    (budget.calls === null || used.calls <= budget.calls) &&
    (budget.wall_ms === null || used.wall_ms <= budget.wall_ms)
  );
}

/** The remaining budget in wire form: uj as a decimal string, limits as integers or null. */
export interface Remaining {
  readonly uj: string;
  readonly calls: number | null;
  readonly wall_ms: number | null;
}

/** remainingOf returns budget − used per dimension, never below zero (a budget tightened under §4.7 below what was spent leaves nothing). */
export function remainingOf(budget: Budget, used: Usage): Remaining {
  const left = budget.uj - used.uj;
  return {
    uj: formatAmount(left < 0n ? 0n : left),
    calls: budget.calls === null ? null : Math.max(0, budget.calls - used.calls),
    wall_ms: budget.wall_ms === null ? null : Math.max(0, budget.wall_ms - used.wall_ms),
  };
}
