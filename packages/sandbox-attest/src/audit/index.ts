// §7.7 Audit chain: attestations of one steward's domain linked by `audit_prev` and `audit_seq`.
export { AUDIT_TAG, stewardDomain, auditGenesis, firstLink, linkAfter } from "./chain.ts";
export type { AuditLink } from "./chain.ts";
export { verifyAuditChain } from "./verify.ts";
export type { AuditOptions, AuditResult } from "./verify.ts";
