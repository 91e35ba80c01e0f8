// A valid predicate and its envelope, shared by the attestation and audit tests.
import { addressOf, testKey, type Digest, type Envelope, type Json, type KeyPair } from "@sbx/wire";
import { signAttestation, type PredicateInput } from "../../src/attestation/index.ts";

export const host = testKey("host");

const units = new Map<Digest, Json>();

/** d returns the address of the fixture object named `s` (remembered, so a unit_id finds its unit). */
export const d = (s: string): Digest => {
  const value = { fixture: s };
  const address = addressOf(value);
  units.set(address, value);
  return address;
};

/** unitOf returns the object whose address is `id`, made by d (the unit descriptor of a unit_id). */
export function unitOf(id: Digest): Json {
  const u = units.get(id);
  if (u === undefined) throw new Error(`fixture: no object made by d() has address ${id}`);
  return u;
}

/** attest signs `p` with `key`, naming as subject the unit d() made for `p.unit_id`. */
export const attest = (p: PredicateInput, key: KeyPair = host): Envelope =>
  signAttestation(p, key, unitOf(p.unit_id));

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
