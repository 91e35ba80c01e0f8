// §16.3–§16.5 Verifying fleet receipts, membership proofs and consistency proofs. A membership
// proof that verifies shows the item is at its index in the signed fleet and that its energy is
// counted in the signed total; a consistency proof shows a later receipt only appended.
import {
  bytesEqual,
  isAmount,
  isDigest,
  openEnvelope,
  parseAmount,
  parseDigest,
  type Envelope,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { inclusionPath } from "../merkle/shape.ts";
import { rootFromInclusion, verifyConsistency } from "../merkle/verify.ts";
import { FLEET_ITEM_RE, parseFleetItem } from "./item.ts";
import { fleetBlake3, fromWireNode, type FleetTreeOps } from "./node.ts";
import {
  FLEET_RECEIPT_TYPE,
  type ConsistencyProof,
  type FleetNode,
  type FleetReceipt,
  type MembershipProof,
} from "./types.ts";

function bad(msg: string): never {
  throw new SandboxAttestError("BadFleetReceipt", msg);
}
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** parseFleetReceipt checks a receipt payload's shape (§16.3); refuses `BadFleetReceipt`. */
export function parseFleetReceipt(v: unknown): FleetReceipt {
  const o = v as Record<string, unknown> | null;
  if (typeof o !== "object" || o === null || Array.isArray(o)) bad("a fleet receipt is an object");
  if (
    Object.keys(o).sort().join(",") !== "end_ms,fleet,host,kind,root,size,start_ms,total_uj" ||
    o.kind !== "fleet"
  )
    bad("fleet receipt members");
  if (
    typeof o.fleet !== "string" ||
    !FLEET_ITEM_RE.test(o.fleet) ||
    typeof o.host !== "string" ||
    !o.host.startsWith("did:key:")
  )
    bad("fleet name or host");
  if (!isCount(o.size) || !isDigest(o.root) || !isAmount(o.total_uj)) bad("size, root or total_uj");
  if (!isCount(o.start_ms) || !isCount(o.end_ms) || o.end_ms < o.start_ms) bad("time span");
  return o as unknown as FleetReceipt;
}

/**
 * openFleetReceipt verifies a signed fleet receipt (§16.3): the envelope and its signature by the
 * receipt's own host (and, when `hosts` is given, one of them: `UnknownSigner`), then its shape.
 */
export function openFleetReceipt(env: Envelope, hosts?: readonly string[]): FleetReceipt {
  const opened = openEnvelope(env, {
    payloadType: FLEET_RECEIPT_TYPE,
    ...(hosts ? { signers: hosts } : {}),
  });
  const r = parseFleetReceipt(opened.payload);
  if (!opened.signers.includes(r.host))
    throw new SandboxAttestError("BadFleetReceipt", "the receipt is not signed by its host");
  return r;
}

/** checkRoot compares a computed root with a receipt: hash first (`FleetRootMismatch`), then total (`FleetSumMismatch`). */
function checkRoot(got: FleetNode, r: FleetReceipt, what: string): void {
  if (!bytesEqual(got.hash, parseDigest(r.root)))
    throw new SandboxAttestError(
      "FleetRootMismatch",
      `${what} does not reproduce the root of the fleet of ${r.size}`,
    );
  if (got.sum !== parseAmount(r.total_uj))
    throw new SandboxAttestError(
      "FleetSumMismatch",
      `the tree's energy is ${got.sum} µJ, the receipt states ${r.total_uj}`,
    );
}

function parsePath(p: unknown, want: number): FleetNode[] {
  if (!Array.isArray(p)) bad("a proof path is a list of nodes");
  if (p.length !== want)
    throw new SandboxAttestError("FleetProofSize", `proof has ${p.length} nodes, want ${want}`);
  return p.map(fromWireNode);
}

/**
 * verifyMembership checks a membership proof against a verified receipt (§16.4). Refuses
 * `FleetProofSize` when the proof is for another size or has the wrong number of nodes,
 * `FleetIndexRange` for an index outside the fleet, `BadFleetItem` for a malformed item,
 * `FleetRootMismatch` when the path does not reproduce the root, and `FleetSumMismatch` when the
 * sums do not add up to the signed total.
 */
export function verifyMembership(
  r: FleetReceipt,
  proof: MembershipProof,
  ops: FleetTreeOps = fleetBlake3,
): void {
  const p = proof as unknown as Record<string, unknown>;
  if (p.kind !== "fleet-membership" || Object.keys(p).sort().join(",") !== "index,item,kind,path,size")
    bad("a membership proof is {kind, index, size, item, path}");
  if (!isCount(p.size) || p.size !== r.size)
    throw new SandboxAttestError(
      "FleetProofSize",
      `proof is for size ${String(p.size)}, the receipt's is ${r.size}`,
    );
  if (!isCount(p.index) || p.index >= r.size)
    throw new SandboxAttestError("FleetIndexRange", `index ${String(p.index)} outside 0..${r.size - 1}`);
  const leaf = ops.leaf(parseFleetItem(p.item));
  const path = parsePath(p.path, inclusionPath(p.index, r.size).length);
  checkRoot(rootFromInclusion(ops, p.index, r.size, leaf, path), r, "the membership proof");
}

/**
 * verifyFleetConsistency checks that receipt `r2` only appended to receipt `r1` (§16.5): same fleet
 * and host, size1 ≤ size2, and the RFC 9162 consistency proof over (hash, sum) nodes reproduces both
 * roots and both totals. Refuses `FleetProofSize` for sizes that differ from the receipts' and
 * `FleetNotAppend` for anything else that does not hold.
 */
export function verifyFleetConsistency(
  r1: FleetReceipt,
  r2: FleetReceipt,
  proof: ConsistencyProof,
  ops: FleetTreeOps = fleetBlake3,
): void {
  const p = proof as unknown as Record<string, unknown>;
  if (p.kind !== "fleet-consistency" || Object.keys(p).sort().join(",") !== "kind,path,size1,size2")
    bad("a consistency proof is {kind, size1, size2, path}");
  if (p.size1 !== r1.size || p.size2 !== r2.size)
    throw new SandboxAttestError(
      "FleetProofSize",
      `proof is for sizes ${String(p.size1)}, ${String(p.size2)}; receipts have ${r1.size}, ${r2.size}`,
    );
  if (r1.fleet !== r2.fleet || r1.host !== r2.host)
    throw new SandboxAttestError("FleetNotAppend", "the receipts are of different fleets or hosts");
  if (r1.size > r2.size || r2.start_ms > r1.start_ms || r2.end_ms < r1.end_ms)
    throw new SandboxAttestError("FleetNotAppend", "the later receipt does not extend the earlier one");
  const path = Array.isArray(p.path) ? p.path.map(fromWireNode) : bad("a proof path is a list of nodes");
  const root1 = { hash: parseDigest(r1.root), sum: parseAmount(r1.total_uj) };
  const root2 = { hash: parseDigest(r2.root), sum: parseAmount(r2.total_uj) };
  try {
    if (r1.size === 0) {
      if (path.length > 0 || !ops.equal(root1, ops.empty()))
        throw new SandboxAttestError(
          "FleetNotAppend",
          "the empty fleet has the empty root and an empty proof",
        );
    } else verifyConsistency(ops, r1.size, r2.size, root1, root2, path);
  } catch (e) {
    if (e instanceof SandboxAttestError && e.code === "ConsistencyProofInvalid")
      throw new SandboxAttestError("FleetNotAppend", e.message, { cause: e });
    throw e;
  }
}
