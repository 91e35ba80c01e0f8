// Fleet benchmarks (§16): building a fleet of 1,000,000 items (item checks, duplicate ids, leaf
// hashing, the (hash, energy-sum) tree kept for proofs), membership-proof generation and
// verification per second. The anchor is the very same fleet code with node's SHA-256
// (node:crypto, OpenSSL) plugged in through fleetOps, measured in the same run, so the ratio isolates
// the hash. A second anchor is the previous design, an object-per-node MerkleTree<FleetNode> with a
// Map of ids over the same BLAKE3 node algebra, so the ratio to it is what the flat node store and
// the id index gained. Goal: build ≥ 500,000 items/s. Figures are medians of RUNS runs; the load
// average is printed because this machine is shared.
import { createHash } from "node:crypto";
import { loadavg } from "node:os";
import { blake3Backend } from "@sbx/wire";
import { MerkleTree } from "@sbx/sandbox-attest/merkle";
import {
  buildFleet,
  fleetBlake3,
  fleetOps,
  fleetReceipt,
  parseFleetItem,
  verifyMembership,
  type Fleet,
  type FleetItem,
  type FleetNode,
  type FleetTreeOps,
  type MembershipProof,
} from "@sbx/sandbox-attest/fleet";
import { rate, row, timeRuns } from "./measure.ts";

const ITEMS = Number(process.env.BENCH_FLEET_ITEMS ?? 1_000_000);
const PROOFS = 20_000;
const RUNS = Number(process.env.BENCH_FLEET_RUNS ?? 5);
const HEX = "0123456789abcdef";

/** items makes n distinct fleet items cheaply (the generator is not what is measured). */
function items(n: number): FleetItem[] {
  const head = "blake3:" + "5a".repeat(26);
  const outcomes = ["completed", "failed", "abandoned"] as const;
  return Array.from({ length: n }, (_, i) => {
    let tail = "";
    for (let x = i, k = 0; k < 12; k++, x = Math.floor(x / 16)) tail += HEX[x % 16] as string;
    return {
      item: `run-${i}`,
      head: `${head}${tail}` as FleetItem["head"],
      energy_uj: String(1_000_000 + ((i * 7919) % 5_000_000)),
      outcome: outcomes[i % 3] as FleetItem["outcome"],
    };
  });
}

const sha256Ops: FleetTreeOps = fleetOps((d) => new Uint8Array(createHash("sha256").update(d).digest()));

function measure(
  name: string,
  ops: FleetTreeOps,
  data: readonly FleetItem[],
): { build: number; prove: number; verify: number } {
  buildFleet(data.slice(0, 20_000), { ops }); // warm the JIT on this algebra
  let f: Fleet | undefined;
  const build = timeRuns(RUNS, () => {
    f = undefined;
    f = buildFleet(data, { ops });
  });
  const fleet = f as Fleet;
  const receipt = fleetReceipt(fleet, "did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK", {
    fleet: "bench",
    start_ms: 0,
    end_ms: 1,
  });
  const picks = Array.from({ length: PROOFS }, (_, i) => (i * 104_729) % fleet.size);
  let proofs: MembershipProof[] = [];
  const prove = timeRuns(RUNS, () => {
    proofs = picks.map((i) => fleet.proveMember(i));
  });
  const verify = timeRuns(RUNS, () => {
    for (const p of proofs) verifyMembership(receipt, p, ops);
  });
  console.log(`  ${name}: built ${fleet.size} items, ${proofs[0]?.path.length ?? 0} nodes per proof`);
  return { build: data.length / build, prove: PROOFS / prove, verify: PROOFS / verify };
}

/** objectTreeBuild is the previous Fleet.append: parse, a Map of ids, a {hash, sum} leaf object, a node-object tree. */
function objectTreeBuild(data: readonly FleetItem[], ops: FleetTreeOps): MerkleTree<FleetNode> {
  const tree = new MerkleTree<FleetNode>(ops);
  const index = new Map<string, number>();
  let total = 0n;
  for (const item of data) {
    const it = parseFleetItem(item);
    if (index.has(it.item)) throw new Error(`duplicate ${it.item}`);
    const leaf = ops.leaf(it);
    if ((total += leaf.sum) >= 1n << 64n) throw new Error("overflow");
    tree.append(leaf);
    index.set(it.item, index.size);
  }
  return tree;
}

/** measureObjectTree times objectTreeBuild over the whole data, as measure times buildFleet. */
function measureObjectTree(ops: FleetTreeOps, data: readonly FleetItem[]): number {
  objectTreeBuild(data.slice(0, 20_000), ops);
  return data.length / timeRuns(RUNS, () => objectTreeBuild(data, ops));
}

export default function fleetBench(): Promise<void> {
  console.log(
    `  ${ITEMS} items, ${PROOFS} proofs, medians of ${RUNS} runs; BLAKE3 backend ${blake3Backend}; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );
  const data = items(ITEMS);
  const anchor = measure("sha256 (node:crypto)", sha256Ops, data);
  const b3 = measure("blake3", fleetBlake3, data);
  const objects = measureObjectTree(fleetBlake3, data);
  row("fleet build, items/s (blake3)", rate(b3.build), b3.build / anchor.build, "node sha256");
  row("fleet build, items/s (anchor: node sha256)", rate(anchor.build));
  row("fleet build (blake3) vs object-per-node tree", rate(b3.build), b3.build / objects, "object tree");
  row("fleet build, items/s (anchor 2: object tree)", rate(objects));
  row("membership proofs generated/s (blake3)", rate(b3.prove), b3.prove / anchor.prove, "node sha256");
  row("membership proofs generated/s (anchor)", rate(anchor.prove));
  row("membership proofs verified/s (blake3)", rate(b3.verify), b3.verify / anchor.verify, "node sha256");
  row("membership proofs verified/s (anchor)", rate(anchor.verify));
  console.log(
    `  goal: build ≥ 500,000 items/s — ${b3.build >= 500_000 ? "met" : "NOT met"} in this run (load average ${loadavg()[0]?.toFixed(1) ?? "?"})`,
  );
  return Promise.resolve();
}
