// §7.1–§7.6 Attestation: in-toto Statement v1 in DSSE, the execution predicate, signing, verification.
export {
  STATEMENT_TYPE,
  PREDICATE_TYPE,
  ATTESTATION_PAYLOAD_TYPE,
  SUBJECT_NAME,
  LIMIT_NAMES,
  parseStatement,
  parsePredicate,
} from "./statement.ts";
export type { Statement, Subject, ExecutionPredicate, Outcome, LimitName } from "./statement.ts";
export { buildStatement, signAttestation, attestationAddress, unitSubject } from "./sign.ts";
export type { PredicateInput } from "./sign.ts";
export { verifyAttestation, MAX_ATTESTATION_BYTES } from "./verify.ts";
export type { AttestationExpect, VerifiedAttestation } from "./verify.ts";
export { verifyInterval } from "./interval.ts";
export type { IntervalObjects, VerifiedInterval } from "./interval.ts";
