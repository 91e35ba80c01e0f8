// @sbx/jcp-grant: the main API of jcp §4.1–§4.5 (also at the subpath @sbx/jcp-grant/grant);
// §4.6 standing grants and §4.7 checkpoints live at @sbx/jcp-grant/standing and /checkpoint.
export { JcpError, isJcpError } from "./errors.ts";
export type { JcpErrorCode } from "./errors.ts";
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
} from "./grant/limits.ts";
export { parsePattern, patternCovers, patternMatches } from "./grant/pattern.ts";
export type { Pattern } from "./grant/pattern.ts";
export {
  scopeCovers,
  scopeAllows,
  resourceCovered,
  checkResources,
  checkActions,
  isSortedSet,
} from "./grant/scope.ts";
export type { Scope } from "./grant/scope.ts";
export { budgetWithin, usageWithin, addUsage, remainingOf, ZERO_USAGE } from "./grant/budget.ts";
export type { Budget, Usage, Remaining } from "./grant/budget.ts";
export { checkGrantPayload, resolveGrant } from "./grant/grant.ts";
export type { GrantPayload, EffectiveGrant, ScopeFields, BudgetFields, MintCitation } from "./grant/grant.ts";
export { assertNarrows, assertChildOf, isInside } from "./grant/contain.ts";
export type { DepthRule } from "./grant/contain.ts";
export { openGrant, GrantCache } from "./grant/open.ts";
export type { OpenedGrant } from "./grant/open.ts";
export { resolveChain, verifyChain, assertNotRevoked, assertInWindow } from "./grant/verify.ts";
export type { EffectiveHook, ResolveOptions, VerifyOptions, VerifiedChain } from "./grant/verify.ts";
export { issueGrant, attenuate, randomNonce } from "./grant/issue.ts";
export type { RootFields, ChildFields } from "./grant/issue.ts";
export { grantStore, chainFromStore } from "./grant/store.ts";
export type { GrantStore } from "./grant/store.ts";
export { SpendLedger, openReceipt, SPEND_TAG } from "./grant/spend.ts";
export type { SpendPayload, SpendRequest, LedgerOptions } from "./grant/spend.ts";
export { RevocationList, REVOCATION_TAG } from "./grant/revoke.ts";
export type { RevocationPayload, RevocationEntry, RevocationIndex } from "./grant/revoke.ts";
export { grantsId, grantSetDoc, checkGrantSetDoc, GRANT_SET_TYPE } from "./grant/grantset.ts";
export type { GrantSetDoc } from "./grant/grantset.ts";
