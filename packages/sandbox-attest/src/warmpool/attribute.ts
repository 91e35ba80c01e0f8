// §15.4–§15.5 Building a claim or an eviction from the ledger's own accounting, so that what the
// writer states is exactly provisioning plus residency, accounted up to the instant of attribution.
import { formatAmount, type Digest } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { LedgerState } from "./ledger.ts";
import type { ClaimedEntry, EvictedEntry, EvictionReason } from "./types.ts";

/** What one resident item has drawn so far, and up to when its residency is accounted. */
export interface ItemAttribution {
  readonly item: string;
  readonly provision_uj: string;
  readonly residency_uj: string;
  readonly total_uj: string;
  readonly accounted_to_ms: number;
}

/** itemAttribution reports a resident item's energy so far; refuses `UnknownItem` or `DoubleClaim`. */
export function itemAttribution(s: LedgerState, item: string): ItemAttribution {
  const it = s.account.items.get(item);
  if (!it) throw new SandboxAttestError("UnknownItem", `item ${item} was never provisioned`);
  if (it.state !== "resident")
    throw new SandboxAttestError("DoubleClaim", `item ${item} is already ${it.state}`);
  return {
    item,
    provision_uj: formatAmount(it.provision),
    residency_uj: formatAmount(it.residency),
    total_uj: formatAmount(it.provision + it.residency),
    accounted_to_ms: it.accounted_to_ms,
  };
}

/** claimBody states a claim of `item` into the run of (unit, grants), residency accounted to now (§15.4). */
export function claimBody(
  s: LedgerState,
  item: string,
  unit: Digest,
  grants: Digest,
): Omit<ClaimedEntry, "seq" | "prev"> {
  const a = itemAttribution(s, item);
  return {
    kind: "claimed",
    item,
    at_ms: a.accounted_to_ms,
    unit,
    grants,
    accrued_uj: a.total_uj,
    provision_uj: a.provision_uj,
    residency_uj: a.residency_uj,
  };
}

/** evictBody states an eviction of `item` as overhead: provisioning plus residency (§15.5). */
export function evictBody(
  s: LedgerState,
  item: string,
  reason: EvictionReason,
): Omit<EvictedEntry, "seq" | "prev"> {
  const a = itemAttribution(s, item);
  return {
    kind: "evicted",
    item,
    at_ms: a.accounted_to_ms,
    reason,
    overhead_uj: a.total_uj,
    provision_uj: a.provision_uj,
    residency_uj: a.residency_uj,
  };
}

/** closeBody states the pool's close with its totals (§15.6). */
export function closeBody(
  s: LedgerState,
  at_ms: number,
): { kind: "closed"; at_ms: number; drawn_uj: string; claimed_uj: string; evicted_uj: string } {
  const a = s.account;
  return {
    kind: "closed",
    at_ms,
    drawn_uj: formatAmount(a.drawn),
    claimed_uj: formatAmount(a.claimed),
    evicted_uj: formatAmount(a.evicted),
  };
}
