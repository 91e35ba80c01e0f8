// §7.5 Verifying an attested interval against the objects it binds: the signed energy receipt
// (§6.1) and, when given, the journal's events (§8), so every figure the predicate restates is
// checked against its source.
import type { Json } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { openReceipt, weakestProvenance, type OpenedReceipt } from "../energy/index.ts";
import { Journal } from "../journal/index.ts";
import { verifyAttestation, type AttestationExpect, type VerifiedAttestation } from "./verify.ts";

/** The objects an attestation binds, as the verifier holds them. */
export interface IntervalObjects {
  /** The signed energy receipt (DSSE envelope) of the interval. */
  readonly receipt: unknown;
  /** The journal's events, in order; when absent the journal is not recomputed. */
  readonly events?: readonly Json[];
}

/** A verified interval: the attestation and its receipt. */
export interface VerifiedInterval {
  readonly attestation: VerifiedAttestation;
  readonly receipt: OpenedReceipt;
}

function mismatch(code: "UnitMismatch" | "GrantsMismatch" | "ReceiptMismatch", what: string): never {
  throw new SandboxAttestError(code, what);
}

/**
 * verifyInterval verifies an attestation (§7.4) with `expect`, then the receipt it binds (§6.1
 * codes; signed by the attestation's host, `UnknownSigner` otherwise) and refuses: a receipt whose
 * address or total differs from the predicate's (`ReceiptMismatch`), of another unit or grant set
 * (`UnitMismatch`, `GrantsMismatch`), of another interval, or whose weakest provenance is not the
 * one the predicate states (`ReceiptMismatch`); and, when events are given, a journal whose tree
 * head is not the predicate's (`JournalMismatch`, or the §8 event codes).
 */
export function verifyInterval(
  env: unknown,
  objects: IntervalObjects,
  expect: AttestationExpect = {},
): VerifiedInterval {
  const a = verifyAttestation(env, expect);
  const p = a.predicate;
  const r = openReceipt(objects.receipt, { hosts: [p.host] });
  if (r.address !== p.energy.receipt) mismatch("ReceiptMismatch", "receipt is not the one bound");
  const rec = r.receipt;
  if (rec.unit_id !== p.unit_id) mismatch("UnitMismatch", "receipt is of another unit");
  if (rec.grants_id !== p.grants_id) mismatch("GrantsMismatch", "receipt is under another grant set");
  if (rec.total_uj !== p.energy.total_uj)
    mismatch("ReceiptMismatch", `total: got ${p.energy.total_uj}, receipt ${rec.total_uj}`);
  if (rec.start_ms !== p.interval.start_ms || rec.end_ms !== p.interval.end_ms)
    mismatch("ReceiptMismatch", "receipt covers another interval");
  const prov = weakestProvenance(rec.components);
  if (prov !== p.energy.provenance)
    mismatch("ReceiptMismatch", `provenance: stated ${p.energy.provenance}, receipt ${prov}`);
  if (objects.events !== undefined) {
    const head = Journal.from(objects.events).head();
    if (head.root !== p.journal.root || head.size !== p.journal.events)
      throw new SandboxAttestError(
        "JournalMismatch",
        `journal recomputes to ${head.root} (${head.size} events)`,
      );
  }
  return { attestation: a, receipt: r };
}
