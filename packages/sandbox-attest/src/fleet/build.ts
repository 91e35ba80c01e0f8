// §16.1–§16.3 Building a fleet: items in order, the (hash, sum) tree over them, and the signed
// receipt that binds size, root, total energy and time span.
import { formatAmount, signPayload, type Envelope, type KeyPair } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { ItemIndex } from "./ids.ts";
import { FLEET_ITEM_RE, parseFleetItem } from "./item.ts";
import { fleetBlake3, rootDigest, toWireNode, type FleetTreeOps } from "./node.ts";
import { FleetTree } from "./tree.ts";
import {
  FLEET_RECEIPT_TYPE,
  type ConsistencyProof,
  type FleetItem,
  type FleetNode,
  type FleetReceipt,
  type MembershipProof,
} from "./types.ts";

/** Options of buildFleet. */
export interface BuildOptions {
  /** The node algebra (default BLAKE3, §16.2); benches pass another hash here. */
  readonly ops?: FleetTreeOps;
  /** Called every `progressEvery` items with the count so far, and once at the end. */
  readonly onProgress?: (done: number, total: number) => void;
  readonly progressEvery?: number;
}

/** A built fleet: its items in order and the tree over them, ready to sign and prove. */
export class Fleet {
  readonly #index: ItemIndex;
  readonly #tree: FleetTree;

  /** A fleet built with `ops`; `expected` items, when known, size the node store once. */
  constructor(ops: FleetTreeOps = fleetBlake3, expected = 0) {
    this.#tree = new FleetTree(ops, expected);
    this.#index = new ItemIndex(expected);
    this.ops = ops;
  }

  /** The node algebra the tree is built with. */
  readonly ops: FleetTreeOps;

  /** items are the fleet's items in order. */
  get items(): readonly FleetItem[] {
    return this.#tree.items;
  }

  /** size is the number of items. */
  get size(): number {
    return this.#tree.size;
  }

  /**
   * append adds one item on the right (§16.1). Refuses, adding nothing, `BadFleetItem`,
   * `DuplicateFleetItem`, and `EnergyOverflow` when the total would exceed 2^64 − 1 (§16.2).
   */
  append(item: unknown): void {
    const it = parseFleetItem(item);
    if (!this.#index.add(it.item))
      throw new SandboxAttestError("DuplicateFleetItem", `item ${it.item} is already in the fleet`);
    try {
      this.#tree.append(it);
    } catch (e) {
      this.#index.removeLast();
      throw e;
    }
  }

  /** root returns the root node of the first `size` items (default all). */
  root(size: number = this.size): FleetNode {
    return this.#tree.root(size);
  }

  /** indexOf returns an item's index; refuses `FleetIndexRange` for an id not in the fleet. */
  indexOf(id: string): number {
    const i = this.#index.get(id);
    if (i === undefined)
      throw new SandboxAttestError(
        "FleetIndexRange",
        `item ${FLEET_ITEM_RE.test(id) ? id : "(invalid id)"} is not in the fleet`,
      );
    return i;
  }

  /** proveMember returns the membership proof of item `index` in the first `size` items (§16.4). */
  proveMember(index: number, size: number = this.size): MembershipProof {
    if (!Number.isSafeInteger(index) || index < 0 || index >= size || size > this.size)
      throw new SandboxAttestError("FleetIndexRange", `index ${index} outside 0..${size - 1}`);
    const path = this.#tree.inclusionProof(index, size).map(toWireNode);
    return { kind: "fleet-membership", index, size, item: this.items[index] as FleetItem, path };
  }

  /** proveConsistency proves the first `size1` items are a prefix of the first `size2` (§16.5). */
  proveConsistency(size1: number, size2: number = this.size): ConsistencyProof {
    if (!Number.isSafeInteger(size1) || size1 < 1 || size1 > size2 || size2 > this.size)
      throw new SandboxAttestError("FleetIndexRange", `sizes ${size1}, ${size2} outside 1..${this.size}`);
    return {
      kind: "fleet-consistency",
      size1,
      size2,
      path: this.#tree.consistencyProof(size1, size2).map(toWireNode),
    };
  }
}

/** buildFleet builds a fleet from items in order (§16.1), reporting progress; refuses as Fleet.append does. */
export function buildFleet(items: Iterable<unknown>, o: BuildOptions = {}): Fleet {
  const total = Array.isArray(items) ? items.length : -1;
  const f = new Fleet(o.ops, Math.max(total, 0));
  const every = o.progressEvery ?? 10_000;
  for (const it of items) {
    f.append(it);
    if (o.onProgress && f.size % every === 0) o.onProgress(f.size, total);
  }
  o.onProgress?.(f.size, total);
  return f;
}

/** The span and name a receipt states. */
export interface ReceiptFields {
  readonly fleet: string;
  readonly start_ms: number;
  readonly end_ms: number;
  /** Sign over the first `size` items only (default all): a receipt for an earlier state. */
  readonly size?: number;
}

/**
 * fleetReceipt returns the payload of the receipt of the first `size` items (§16.3). Refuses
 * `BadFleetReceipt` for an invalid name or a span with end before start.
 */
export function fleetReceipt(f: Fleet, host: string, r: ReceiptFields): FleetReceipt {
  const size = r.size ?? f.size;
  if (!FLEET_ITEM_RE.test(r.fleet))
    throw new SandboxAttestError("BadFleetReceipt", "fleet name is not a valid name");
  if (
    !Number.isSafeInteger(r.start_ms) ||
    !Number.isSafeInteger(r.end_ms) ||
    r.start_ms < 0 ||
    r.end_ms < r.start_ms
  )
    throw new SandboxAttestError("BadFleetReceipt", `span [${r.start_ms}, ${r.end_ms}] is not a time span`);
  const root = f.root(size);
  return {
    kind: "fleet",
    fleet: r.fleet,
    host,
    size,
    root: rootDigest(root),
    total_uj: formatAmount(root.sum),
    start_ms: r.start_ms,
    end_ms: r.end_ms,
  };
}

/** signFleetReceipt signs the receipt of `f` with the host key (§16.3); refuses as fleetReceipt does. */
export function signFleetReceipt(f: Fleet, host: KeyPair, r: ReceiptFields): Envelope {
  return signPayload(FLEET_RECEIPT_TYPE, fleetReceipt(f, host.did, r), host);
}
