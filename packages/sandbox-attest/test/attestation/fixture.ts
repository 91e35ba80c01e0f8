// A valid predicate and its envelope, shared by the attestation and audit tests.
import { addressOf, testKey, type Digest } from "@sbx/wire";
import type { PredicateInput } from "../../src/attestation/index.ts";

export const host = testKey("host");
export const d = (s: string): Digest => addressOf({ fixture: s });

/** fixturePredicate returns a complete predicate input with optional overrides. */
export function fixturePredicate(over: Partial<PredicateInput> = {}): PredicateInput {
  return {
    unit_id: d("unit"),
    grants_id: d("grants"),
    manifest: d("manifest"),
    exec_policy: d("policy"),
    energy: { receipt: d("receipt"), total_uj: "1250000", provenance: "estimated" },
    journal: { root: d("journal"), events: 7 },
    outcome: { status: "exited", exit_code: 0 },
    interval: { start_ms: 1_700_000_000_000, end_ms: 1_700_000_001_500 },
    level: "S4",
    ...over,
  };
}
