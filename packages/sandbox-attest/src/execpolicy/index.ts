// @sbx/sandbox-attest/execpolicy: content-addressed process control (§5.5), the pure half.
export {
  EXEC_POLICY_PAYLOAD_TYPE,
  EXEC_POLICY_TYPE,
  EXEC_POLICY_MAX_DIGESTS,
  makePolicy,
  parsePolicy,
  policyAddress,
  signPolicy,
  openPolicy,
} from "./policy.ts";
export type { ExecMode, ExecPolicy, OpenedPolicy } from "./policy.ts";
export { decide, assertAllowed, withDigests, withMode } from "./decide.ts";
export type { ExecRule, ExecVerdict } from "./decide.ts";
export { execDecisionEvent, checkDecision } from "./record.ts";
export type { ExecDecision, ExecRoute, ExecSource } from "./record.ts";
