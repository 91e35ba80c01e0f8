// §13 What a durable run's unit descriptor names besides its command: the exec policy every
// interval is gated by (label `exec_policy`, §5.5.5) and the grant chain the run is governed by
// (label `grant_chain`, jcp §4.4), each by content address. They are bound into unit_id, so a host
// resuming the run applies the same ones; a run archive carries the objects along (../archive).
import { isDigest, parseCanonical, type Digest } from "@sbx/wire";
import { parseUnit, type UnitDescriptor } from "@sbx/sandbox-attest/unit";

/** The unit label naming the exec policy of a gated durable run. */
export const EXEC_POLICY_LABEL = "exec_policy";
/** The unit label naming the grant chain object of a durable run under grants. */
export const GRANT_CHAIN_LABEL = "grant_chain";

/** unitCites returns the addresses a unit descriptor's labels name (policy, grant chain), if any. */
export function unitCites(unit: UnitDescriptor): Digest[] {
  const out: Digest[] = [];
  for (const k of [EXEC_POLICY_LABEL, GRANT_CHAIN_LABEL]) {
    const v = unit.labels?.[k];
    if (v !== undefined && isDigest(v)) out.push(v);
  }
  return out;
}

/** unitCitesOf is unitCites of a stored descriptor's bytes; none for bytes that are not a descriptor. */
export function unitCitesOf(bytes: Uint8Array | null | undefined): Digest[] {
  if (bytes === null || bytes === undefined) return [];
  try {
    return unitCites(parseUnit(parseCanonical(bytes)));
  } catch {
    return [];
  }
}
