// jcp §4.3 budgets enforced while a unit runs: a live check (runUnit's `live`) that reads the
// meter every metering period and stops the unit before its spend would pass the smallest remaining
// budget along its grant's chain. With E the interval's energy at a check and Δ its growth over the
// last period, the unit is stopped (`BudgetExhausted`) as soon as E + 2Δ exceeds the remaining
// budget R: the period that follows, and the one the stop may take, would pass it. It is sent
// SIGTERM, and SIGKILL one period later. So the interval spends at most E + (one period's energy)
// ≤ R + one period's energy whatever the unit does, and at most R for a unit whose power does not
// rise between periods, so the debit fits the budget (jcp §4.3 "Budgets enforced live";
// measured by packages/cli/test/sbx-grant.test.ts).
import { CCF_DEFAULTS } from "@sbx/sandbox-attest/energy";
import type { LiveCheck } from "../run/run.ts";

/** The default metering period of a live budget check: 100 ms, the meter's own sampling period. */
export const LIVE_PERIOD_MS = 100;

/**
 * periodFloorUj is what one metering period of `periodMs` can use at the least a unit draws when it
 * computes: one busy vCPU at the CPU model's full power (CCF max_uw_per_vcpu, 3.5 W; sandbox-attest
 * §6.3), 350,000 µJ at 100 ms. A run with less than this left is refused at start
 * (`BudgetExhausted`, jcp §4.3): its first period alone could pass the budget.
 */
export function periodFloorUj(periodMs: number = LIVE_PERIOD_MS): bigint {
  return (BigInt(CCF_DEFAULTS.cpu.max_uw_per_vcpu) * BigInt(periodMs)) / 1000n;
}

/** A live budget check and what it saw. */
export interface BudgetWatch extends LiveCheck {
  /** The largest energy one period added, in µJ (the bound's "one period's worth"). */
  maxPeriodUj(): bigint;
  /** The remaining budget at the last check, in µJ. */
  lastRemaining(): bigint;
}

/**
 * budgetWatch builds the live check of a run under grants: `remaining()` gives the smallest
 * remaining budget along the chain (µJ) and is asked at every check, so a spend by another writer
 * or an issuer's amendment (jcp §4.7) lowers it while the unit runs.
 */
export function budgetWatch(remaining: () => bigint, periodMs = LIVE_PERIOD_MS): BudgetWatch {
  let last = 0n;
  let maxDelta = 0n;
  let left = -1n;
  return {
    periodMs,
    check(total) {
      const delta = total > last ? total - last : 0n;
      last = total;
      if (delta > maxDelta) maxDelta = delta;
      left = remaining();
      return total + 2n * delta > left ? "BudgetExhausted" : null;
    },
    overshoot(total) {
      const now = remaining();
      return total > now ? total - now : 0n;
    },
    maxPeriodUj: () => maxDelta,
    lastRemaining: () => left,
  };
}
