// C3 fixture: the base unit, predicate and statement every C3 and C5 vector starts from.
import {
  addressOf,
  blake3,
  canonicalBytes,
  toHex,
  type Digest,
  type Envelope,
  type Json,
  type JsonObject,
  type KeyPair,
} from "@sbx/wire";
import {
  ATTESTATION_PAYLOAD_TYPE,
  buildStatement,
  signAttestation,
  type PredicateInput,
} from "@sbx/sandbox-attest/attestation";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { signedRaw } from "../../generate/build.ts";
import { key } from "../../generate/keys.ts";

export const C = "C3" as const;
export const d = (s: string): Digest => addressOf({ c3: s });

export const host = key("host");
export const unit = makeUnit({
  argv: ["python3", "-c", "print('hi')"],
  manifest: d("manifest"),
  level: "S4",
  labels: { task: "c3" },
});

/** attest signs `p` by `k`, its subject the fixture unit (whose address `p.unit_id` must be). */
export const attest = (p: PredicateInput, k: KeyPair = host): Envelope => signAttestation(p, k, unit);

export function predicate(over: Partial<PredicateInput> = {}): PredicateInput {
  return {
    unit_id: unitId(unit),
    grants_id: d("grants"),
    manifest: d("manifest"),
    exec_policy: d("policy"),
    energy: { receipt: d("receipt"), total_uj: "2750000", provenance: "attributed" },
    journal: { root: d("journal"), events: 12 },
    outcome: { status: "exited", exit_code: 0 },
    interval: { start_ms: 1_767_225_600_000, end_ms: 1_767_225_603_250 },
    level: "S4",
    audit_prev: d("audit-prev"),
    audit_seq: 3,
    run_head: d("run-head"),
    ...over,
  };
}

/** unlinkedPredicate is the base predicate (with `over` applied) without audit link or run head. */
export function unlinkedPredicate(over: Partial<PredicateInput> = {}): PredicateInput {
  const p = predicate(over);
  return {
    unit_id: p.unit_id,
    grants_id: p.grants_id,
    manifest: p.manifest,
    exec_policy: p.exec_policy,
    energy: p.energy,
    journal: p.journal,
    outcome: p.outcome,
    interval: p.interval,
    level: p.level,
  };
}

/** The full set of bindings of the base predicate, as a vector states them. */
export function bindings(p: PredicateInput = predicate()): JsonObject {
  return {
    host: host.did,
    unit_id: p.unit_id,
    grants_id: p.grants_id,
    manifest: p.manifest,
    exec_policy: p.exec_policy,
    receipt: p.energy.receipt,
    total_uj: p.energy.total_uj,
    journal_root: p.journal.root,
    journal_events: p.journal.events,
    run_head: p.run_head ?? null,
    audit_prev: p.audit_prev ?? null,
    unit: unit as unknown as Json,
  };
}

export const asJson = (e: Envelope): Json => e as unknown as Json;
export const verifyInput = (envelope: Envelope, expect: JsonObject = bindings()): Json => ({
  envelope: asJson(envelope),
  expect,
});
/**
 * okOut is what a valid attestation.verify case answers, by construction and not by the
 * implementation under test: the address of the payload bytes (§2.4) and the statement's predicate
 * as signed.
 */
export const okOut = (e: Envelope): Json => {
  const body = Buffer.from(e.payload, "base64");
  const statement = JSON.parse(body.toString("utf8")) as JsonObject;
  return { address: `blake3:${toHex(blake3(body))}`, predicate: statement.predicate ?? null };
};

/** signRaw signs exact bytes, for statements the builder would refuse or re-canonicalise. */
export function signRaw(body: Uint8Array, k: KeyPair = host, type = ATTESTATION_PAYLOAD_TYPE): Envelope {
  return signedRaw(type, body, k);
}
export const signJson = (v: unknown, k: KeyPair = host): Envelope => signRaw(canonicalBytes(v), k);

export const statement = (): JsonObject =>
  buildStatement({ ...predicate(), host: host.did }, unit) as unknown as JsonObject;

/** flip flips one bit of the first byte of base64 text. */
export function flip(b64: string): string {
  const b = Buffer.from(b64, "base64");
  b[0]! ^= 1;
  return b.toString("base64");
}
