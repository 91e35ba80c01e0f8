// §16 Fleet records: per-item runs aggregated in a (hash, energy-sum) Merkle tree, signed receipts,
// log-size membership proofs and consistency proofs.
export { FLEET_RECEIPT_TYPE, FLEET_OUTCOMES } from "./types.ts";
export type {
  FleetItem,
  FleetOutcome,
  FleetNode,
  WireNode,
  FleetReceipt,
  MembershipProof,
  ConsistencyProof,
} from "./types.ts";
export { FLEET_ITEM_RE, parseFleetItem, itemText, itemBytes } from "./item.ts";
export { fleetOps, fleetOpsWith, fleetBlake3, toWireNode, fromWireNode, rootDigest } from "./node.ts";
export type { FleetHash, FleetHasher, FleetTreeOps } from "./node.ts";
export { Fleet, buildFleet, fleetReceipt, signFleetReceipt } from "./build.ts";
export type { BuildOptions, ReceiptFields } from "./build.ts";
export { parseFleetReceipt, openFleetReceipt, verifyMembership, verifyFleetConsistency } from "./verify.ts";
export { fleetItemOfRun } from "./fromrun.ts";
export type { RunFleetItem } from "./fromrun.ts";
