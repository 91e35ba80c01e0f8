// @sbx/jcp-grant/standing: standing grants (jcp §4.6): mint policies signed by the held grant's
// issuer, events, minting bounded and rate-limited children, and the hash-chained mint ledger.
export {
  POLICY_PAYLOAD_TYPE,
  MAX_POLICY_BYTES,
  MAX_TRIGGERS,
  checkPolicyPayload,
  openPolicy,
  createPolicy,
  policyTotal,
} from "./policy.ts";
export type { Trigger, ChildTemplate, PolicyPayload, OpenedPolicy } from "./policy.ts";
export {
  EVENT_PAYLOAD_TYPE,
  MAX_EVENT_BYTES,
  openEvent,
  signEvent,
  triggerMatches,
  assertTriggered,
} from "./event.ts";
export type { EventPayload, OpenedEvent } from "./event.ts";
export { MINT_PAYLOAD_TYPE, MINT_LEDGER_TAG, openMintEntry, MintBook } from "./ledger.ts";
export type { MintEntry, MintedChild } from "./ledger.ts";
export { openStanding, StandingMinter, verifyMintLedger, eventAddress } from "./mint.ts";
export type { StandingGrant, Minted, LedgerSummary, LedgerInput, LedgerFiles } from "./mint.ts";
