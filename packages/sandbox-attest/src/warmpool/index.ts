// §15 Warm pools: the signed, hash-chained pool ledger, its accounting, and the claim's joule price.
export { POOL_CHAIN_TAG, POOL_PAYLOAD_TYPE, POOL_ENTRY_PAYLOAD_TYPE, EVICTION_REASONS } from "./types.ts";
export type {
  PoolDescriptor,
  PoolEntry,
  ProvisionedEntry,
  AccruedEntry,
  ClaimedEntry,
  EvictedEntry,
  ClosedEntry,
  PoolLedger,
  EvictionReason,
  Attribution,
} from "./types.ts";
export { ITEM_ID_RE, parseEntry, parseDescriptor } from "./entry.ts";
export { assertFigure, figureUj, FIGURE_MAX_COMPONENTS } from "./figure.ts";
export { applyEntry, newAccount, outstanding } from "./account.ts";
export type { PoolAccount, ItemAccount } from "./account.ts";
export { createPool, appendEntry, poolGenesis, cloneAccount } from "./ledger.ts";
export type { LedgerState, EntryBody } from "./ledger.ts";
export { replayLedger, verifyLedger, summarize, extendLedger, copyLedgerState } from "./verify.ts";
export type { LedgerSummary, VerifyLedgerOptions } from "./verify.ts";
export { claimAddress, claimByAddress, claimComponents, checkChargeOf, checkClaimCharged } from "./charge.ts";
export { itemAttribution, claimBody, evictBody, closeBody } from "./attribute.ts";
export type { ItemAttribution } from "./attribute.ts";
