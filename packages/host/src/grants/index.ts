// Grants govern runs (jcp §4.2–§4.3 onto sandbox-attest §5): scopes mapped onto the sandbox, and the
// live budget check.
export {
  fsPath,
  mapScope,
  refuseUnbounded,
  refuseUnsupported,
  requireWorkspace,
  unboundedResources,
  unsupportedResources,
} from "./scopes.ts";
export type { ScopeMap } from "./scopes.ts";
export { budgetWatch, LIVE_PERIOD_MS, periodFloorUj } from "./live.ts";
export type { BudgetWatch } from "./live.ts";
export { loopbackPorts, startForwarders, NET_DIR } from "./netfwd.ts";
export type { Forwarders } from "./netfwd.ts";
export { execGrant, grantExecPolicy, unionExecGrant } from "./execscope.ts";
export type { ExecGrant } from "./execscope.ts";
export { openGrantRun, refuseBelowPeriod } from "./grantrun.ts";
export type { GrantTerms, GrantRun, GrantLedger, GrantDebit } from "./grantrun.ts";
