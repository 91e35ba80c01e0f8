// @sbx/jcp-grant/grant: grants, scope containment, budgets, attenuation, chain verification, spend
// receipts, revocation and grant sets (jcp §4.1–§4.5).
export { JcpError, isJcpError } from "../errors.ts";
export type { JcpErrorCode } from "../errors.ts";
export {
  GRANT_PAYLOAD_TYPE,
  SPEND_PAYLOAD_TYPE,
  REVOCATION_PAYLOAD_TYPE,
  MAX_CHAIN_LENGTH,
  MAX_DEPTH,
  MAX_GRANT_BYTES,
  MAX_RESOURCES,
  MAX_ACTIONS,
  MAX_PATTERN_BYTES,
  MAX_SEGMENTS,
  MAX_GRANT_SET,
} from "./limits.ts";
export { parsePattern, patternCovers, patternMatches } from "./pattern.ts";
export type { Pattern } from "./pattern.ts";
export {
  scopeCovers,
  scopeAllows,
  resourceCovered,
  checkResources,
  checkActions,
  isSortedSet,
} from "./scope.ts";
export type { Scope } from "./scope.ts";
export { budgetWithin, checkBudget, usageWithin, addUsage, remainingOf, ZERO_USAGE } from "./budget.ts";
export type { Budget, Usage, Remaining } from "./budget.ts";
export { checkGrantPayload, resolveGrant } from "./grant.ts";
export type { GrantPayload, EffectiveGrant, ScopeFields, BudgetFields, MintCitation } from "./grant.ts";
export { assertNarrows, assertChildOf, isInside } from "./contain.ts";
export type { DepthRule } from "./contain.ts";
export { openGrant, GrantCache } from "./open.ts";
export type { OpenedGrant } from "./open.ts";
export { resolveChain, verifyChain, assertNotRevoked, assertInWindow } from "./verify.ts";
export type { EffectiveHook, ResolveOptions, VerifyOptions, VerifiedChain } from "./verify.ts";
export { issueGrant, attenuate, randomNonce } from "./issue.ts";
export type { RootFields, ChildFields } from "./issue.ts";
export { grantStore, chainFromStore } from "./store.ts";
export type { GrantStore } from "./store.ts";
export { SpendLedger, openReceipt, SPEND_TAG } from "./spend.ts";
export type { SpendCites, SpendPayload, SpendRequest, LedgerOptions } from "./spend.ts";
export { RevocationList, REVOCATION_TAG } from "./revoke.ts";
export type { RevocationPayload, RevocationEntry, RevocationIndex } from "./revoke.ts";
export {
  grantsId,
  grantSetDoc,
  checkGrantSetDoc,
  isUngoverned,
  GRANT_SET_TYPE,
  NO_GRANT_SET,
} from "./grantset.ts";
export type { GrantSetDoc } from "./grantset.ts";
