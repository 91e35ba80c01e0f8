// JCP §4 failure codes. One error class for the package; tests assert the code, never the message.
import { CodedError, type WireErrorCode } from "@sbx/wire";

/**
 * Codes a JCP refusal carries (jcp §4.1–§4.7). Wire-layer refusals met while opening a signed
 * object keep their wire code (sandbox-attest §2.9), e.g. `BadSignature`, `NotCanonical`.
 */
export type JcpErrorCode =
  | WireErrorCode
  // §4.1 the grant object
  | "BadGrant"
  | "BadPattern"
  | "GrantTooLarge"
  // §4.4 attenuation and chain verification
  | "ChainTooLong"
  | "BrokenChain"
  | "UntrustedRoot"
  | "NotHolder"
  | "ScopeWidens"
  | "BudgetExceeds"
  | "WindowWidens"
  | "DepthExhausted"
  | "Expired"
  | "NotYetValid"
  // §4.3 budgets and spend
  | "BadReceipt"
  | "BrokenReceiptChain"
  | "UntrustedHost"
  | "Overspend"
  | "BadOvershoot"
  // §4.5 revocation
  | "Revoked"
  | "BadRevocation"
  | "BrokenRevocationList"
  | "NotAuthorized"
  // §4.1 grant sets
  | "BadGrantSet"
  // §4.6 standing grants
  | "BadPolicy"
  | "PolicyNotByIssuer"
  | "BadEvent"
  | "TriggerMismatch"
  | "EventReplayed"
  | "TemplateExceeded"
  | "MintCapExceeded"
  | "MintBudgetExceeded"
  | "RateExceeded"
  | "BadMintEntry"
  | "BrokenMintLedger"
  // §4.7 checkpoints and amendments
  | "BadCheckpoint"
  | "BadAmendment"
  | "NotAmendable"
  | "SeparationOfDuties"
  | "AmendmentWidens"
  | "BudgetBelowSpent"
  | "UnacknowledgedAmendment"
  | "BrokenCheckpointLog";

/** The package's one error class: a stable `code`, a message, and an optional cause. */
export class JcpError extends CodedError<JcpErrorCode> {
  override readonly name = "JcpError";
}

/** isJcpError reports whether `e` is a JcpError, optionally with the given code. */
export function isJcpError(e: unknown, code?: JcpErrorCode): e is JcpError {
  return e instanceof JcpError && (code === undefined || e.code === code);
}
