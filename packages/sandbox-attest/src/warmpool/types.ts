// §15 Warm pools: the wire shapes of the pool descriptor and the ledger entries.
import type { Amount, Digest, Envelope } from "@sbx/wire";
import type { EnergyComponent } from "../energy/types.ts";

/** The chain tag of a pool ledger (§15.2): head₀ = BLAKE3(POOL_CHAIN_TAG ‖ pool_id). */
export const POOL_CHAIN_TAG = "sandbox.warmpool/1";
/** The DSSE payload type of a pool descriptor (§15.1). */
export const POOL_PAYLOAD_TYPE = "application/vnd.sandbox-attest.warmpool+json";
/** The DSSE payload type of one ledger entry (§15.2). */
export const POOL_ENTRY_PAYLOAD_TYPE = "application/vnd.sandbox-attest.warmpool-entry+json";

/** The signed descriptor of a pool; its address is the pool id (§15.1). */
export interface PoolDescriptor {
  readonly kind: "pool";
  readonly name: string;
  readonly host: string;
  readonly manifest: Digest;
  readonly created_ms: number;
}

/** Members every entry carries: its position in the chain (§15.2). */
interface EntryBase {
  readonly seq: number;
  readonly prev: Digest;
}

/** An item provisioned into the pool, with the energy provisioning drew (§15.3). */
export interface ProvisionedEntry extends EntryBase {
  readonly kind: "provisioned";
  readonly item: string;
  readonly manifest: Digest;
  readonly at_ms: number;
  readonly provision: readonly EnergyComponent[];
}

/** Idle energy one resident item drew over [from_ms, to_ms) (§15.3). */
export interface AccruedEntry extends EntryBase {
  readonly kind: "accrued";
  readonly item: string;
  readonly from_ms: number;
  readonly to_ms: number;
  readonly residency: readonly EnergyComponent[];
}

/** The split every attribution states: provisioning, residency, and their sum (§15.4). */
export interface Attribution {
  readonly provision_uj: Amount;
  readonly residency_uj: Amount;
}

/** An item claimed into the run of `unit` under `grants` (the pair a run record binds at genesis, §13) (§15.4). */
export interface ClaimedEntry extends EntryBase, Attribution {
  readonly kind: "claimed";
  readonly item: string;
  readonly at_ms: number;
  readonly unit: Digest;
  readonly grants: Digest;
  readonly accrued_uj: Amount;
}

/** An item evicted unclaimed; its energy is pool overhead, never zero (§15.5). */
export interface EvictedEntry extends EntryBase, Attribution {
  readonly kind: "evicted";
  readonly item: string;
  readonly at_ms: number;
  readonly reason: string;
  readonly overhead_uj: Amount;
}

/** The pool closed: every item attributed, with the pool's totals (§15.6). */
export interface ClosedEntry extends EntryBase {
  readonly kind: "closed";
  readonly at_ms: number;
  readonly drawn_uj: Amount;
  readonly claimed_uj: Amount;
  readonly evicted_uj: Amount;
}

/** Any ledger entry. */
export type PoolEntry = ProvisionedEntry | AccruedEntry | ClaimedEntry | EvictedEntry | ClosedEntry;

/** The ledger as it travels: the signed descriptor and the signed entries in order (§15.2). */
export interface PoolLedger {
  readonly pool: Envelope;
  readonly entries: readonly Envelope[];
}

/** The reasons an eviction may state (§15.5). */
export const EVICTION_REASONS = [
  "expired",
  "capacity",
  "manifest-changed",
  "host-shutdown",
  "operator",
  "failed",
] as const;
/** An eviction reason. */
export type EvictionReason = (typeof EVICTION_REASONS)[number];
