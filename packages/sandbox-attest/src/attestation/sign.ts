// §7.3 Signing: the statement's JCS bytes in a DSSE envelope of type application/vnd.in-toto+json,
// signed by the host key the predicate names.
import { envelopeAddress, signPayload, type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import {
  ATTESTATION_PAYLOAD_TYPE,
  PREDICATE_TYPE,
  STATEMENT_TYPE,
  SUBJECT_NAME,
  parseStatement,
  type ExecutionPredicate,
  type Statement,
} from "./statement.ts";

/** What the host fills in to attest an interval: every predicate member but `host` (§7.2). */
export type PredicateInput = Omit<ExecutionPredicate, "host">;

/**
 * buildStatement wraps a predicate in an in-toto Statement v1 whose subject is the unit (§7.1).
 * Refuses a malformed predicate (`BadPredicate`).
 */
export function buildStatement(predicate: ExecutionPredicate): Statement {
  const hex = predicate.unit_id.slice("blake3:".length);
  const statement = {
    _type: STATEMENT_TYPE,
    subject: [{ name: SUBJECT_NAME, digest: { blake3: hex } }],
    predicateType: PREDICATE_TYPE,
    predicate,
  };
  return parseStatement(statement);
}

/**
 * signAttestation builds the statement for `input` with `host` = the host key's did:key, and signs
 * it (§7.3). Returns the DSSE envelope; its address (attestationAddress) is what `audit_prev` and
 * run-record segments cite. Refuses a malformed predicate (`BadPredicate`).
 */
export function signAttestation(input: PredicateInput, hostKey: KeyPair): Envelope {
  const statement = buildStatement({ ...input, host: hostKey.did });
  return signPayload(ATTESTATION_PAYLOAD_TYPE, statement, hostKey);
}

/** attestationAddress returns an attestation's content address: the digest of its payload (§7.3). */
export function attestationAddress(env: Envelope): Digest {
  return envelopeAddress(env);
}
