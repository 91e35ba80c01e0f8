// §16 Fleet records: the wire shapes of a fleet item, the signed fleet receipt, and the proofs.
import type { Amount, Digest } from "@sbx/wire";

/** The DSSE payload type of a fleet receipt (§16.3). */
export const FLEET_RECEIPT_TYPE = "application/vnd.sandbox-attest.fleet-receipt+json";

/** How a fleet item's run ended: the close outcome of its run record (§13). */
export type FleetOutcome = "completed" | "failed" | "abandoned";

/** The outcomes a fleet item may state. */
export const FLEET_OUTCOMES: readonly FleetOutcome[] = ["completed", "failed", "abandoned"];

/** One per-item run of a fleet (§16.1): its id, final run-record head, total energy and outcome. */
export interface FleetItem {
  readonly item: string;
  readonly head: Digest;
  readonly energy_uj: Amount;
  readonly outcome: FleetOutcome;
}

/** A node of the fleet tree: a hash and the energy sum of the subtree under it (§16.2). */
export interface FleetNode {
  readonly hash: Uint8Array;
  readonly sum: bigint;
}

/** A node as it travels in a proof: `{hash: "blake3:…", uj: "…"}` (§16.4). */
export interface WireNode {
  readonly hash: Digest;
  readonly uj: Amount;
}

/** The payload of a signed fleet receipt (§16.3): size, root and total energy over a time span. */
export interface FleetReceipt {
  readonly kind: "fleet";
  readonly fleet: string;
  readonly host: string;
  readonly size: number;
  readonly root: Digest;
  readonly total_uj: Amount;
  readonly start_ms: number;
  readonly end_ms: number;
}

/** A membership proof (§16.4): the item, its index, the tree size, and the RFC 9162 path of nodes. */
export interface MembershipProof {
  readonly kind: "fleet-membership";
  readonly index: number;
  readonly size: number;
  readonly item: FleetItem;
  readonly path: readonly WireNode[];
}

/** A consistency proof (§16.5): the fleet of size1 is a prefix of the fleet of size2. */
export interface ConsistencyProof {
  readonly kind: "fleet-consistency";
  readonly size1: number;
  readonly size2: number;
  readonly path: readonly WireNode[];
}
