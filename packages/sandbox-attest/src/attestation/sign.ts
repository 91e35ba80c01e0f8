// §7.3 Signing: the statement's JCS bytes in a DSSE envelope of type application/vnd.in-toto+json,
// signed by the host key the predicate names.
import { sha256 } from "@noble/hashes/sha2.js";
import {
  blake3,
  canonicalBytes,
  envelopeAddress,
  signPayload,
  toHex,
  type Digest,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import {
  ATTESTATION_PAYLOAD_TYPE,
  PREDICATE_TYPE,
  STATEMENT_TYPE,
  SUBJECT_NAME,
  parseStatement,
  type ExecutionPredicate,
  type Statement,
  type Subject,
} from "./statement.ts";

/** What the host fills in to attest an interval: every predicate member but `host` (§7.2). */
export type PredicateInput = Omit<ExecutionPredicate, "host">;

/**
 * unitSubject returns the subject that names a unit (§7.1): the BLAKE3 and the SHA-256 of the
 * canonical bytes (§2.1) of its descriptor `unit`. Throws the wire codes for a value with no
 * canonical form.
 */
export function unitSubject(unit: unknown): Subject {
  const bytes = canonicalBytes(unit);
  return { name: SUBJECT_NAME, digest: { blake3: toHex(blake3(bytes)), sha256: toHex(sha256(bytes)) } };
}

/**
 * buildStatement wraps a predicate in an in-toto Statement v1 whose subject is the unit `unit`, the
 * descriptor whose address is the predicate's `unit_id` (§7.1). Refuses a descriptor of another
 * address (`SubjectMismatch`) and a malformed predicate (`BadPredicate`).
 */
export function buildStatement(predicate: ExecutionPredicate, unit: unknown): Statement {
  const subject = unitSubject(unit);
  if (`blake3:${subject.digest.blake3}` !== predicate.unit_id)
    throw new SandboxAttestError(
      "SubjectMismatch",
      "the unit descriptor given is not the predicate's unit_id",
    );
  const statement = {
    _type: STATEMENT_TYPE,
    subject: [subject],
    predicateType: PREDICATE_TYPE,
    predicate,
  };
  return parseStatement(statement);
}

/**
 * signAttestation builds the statement for `input` with `host` = the host key's did:key and the
 * subject named by the unit descriptor `unit` (whose address must be `input.unit_id`), and signs
 * it (§7.3). Returns the DSSE envelope; its address (attestationAddress) is what `audit_prev` and
 * run-record segments cite. Refuses a descriptor of another address (`SubjectMismatch`) and a
 * malformed predicate (`BadPredicate`).
 */
export function signAttestation(input: PredicateInput, hostKey: KeyPair, unit: unknown): Envelope {
  const statement = buildStatement({ ...input, host: hostKey.did }, unit);
  return signPayload(ATTESTATION_PAYLOAD_TYPE, statement, hostKey);
}

/** attestationAddress returns an attestation's content address: the digest of its payload (§7.3). */
export function attestationAddress(env: Envelope): Digest {
  return envelopeAddress(env);
}
