// §4.3 Budgets: microjoules (a 64-bit decimal string on the wire), and optionally a number of calls
// and wall-clock milliseconds. A limit a root leaves out is unlimited; one a child leaves out is
// its parent's, so leaving a field out never widens.
import { formatAmount, isAmount, parseAmount } from "@sbx/wire";
import { JcpError } from "../errors.ts";

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

/**
 * limitWithin is §4.3 "Containment of limits" for calls or wall_ms: an unlimited parent (null)
 * bounds nothing; a finite parent bounds only a finite child not above it, so an unlimited child
 * under a finite parent is outside it.
 */
function limitWithin(child: number | null, parent: number | null): boolean {
  return parent === null || (child !== null && child <= parent);
}

/**
 * budgetWithin reports whether `child` is nowhere above `parent` (§4.3): uj, calls and wall time.
 * Every check that one budget lies inside another uses it: attenuation and verification (§4.4),
 * a minted child against its template (§4.6), an amendment against the grant in force (§4.7).
 */
export function budgetWithin(child: Budget, parent: Budget): boolean {
  return (
    child.uj <= parent.uj &&
    limitWithin(child.calls, parent.calls) &&
    limitWithin(child.wall_ms, parent.wall_ms)
  );
}

const BUDGET_KEYS = "calls,uj,wall_ms";
function isLimit(v: unknown): v is number | null {
  return v === null || (typeof v === "number" && Number.isSafeInteger(v) && v >= 0);
}

/**
 * checkBudget reads a budget in its effective wire form (§4.3, as chain.verify outputs it): exactly
 * `uj` (an amount), `calls` and `wall_ms` (each an integer ≥ 0, or null for unlimited); anything else
 * is `BadGrant`. Only an effective budget writes null; a signed grant never does (§4.1).
 */
export function checkBudget(v: unknown): Budget {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new JcpError("BadGrant", "a budget is an object");
  const o = v as Record<string, unknown>;
  if (Object.keys(o).sort().join(",") !== BUDGET_KEYS)
    throw new JcpError("BadGrant", `an effective budget has exactly the members ${BUDGET_KEYS}`);
  if (!isAmount(o.uj)) throw new JcpError("BadGrant", "budget.uj must be a decimal amount string");
  if (!isLimit(o.calls) || !isLimit(o.wall_ms))
    throw new JcpError("BadGrant", "budget.calls and budget.wall_ms are integers ≥ 0 or null");
  return { uj: parseAmount(o.uj), calls: o.calls, wall_ms: o.wall_ms };
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
