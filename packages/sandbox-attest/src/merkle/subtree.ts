// §8.1 Subtree consistency (draft-ietf-plants-merkle-tree-certs §4.4): the valid subtree
// [start, end) with root subRoot is a node, or the prefix of a node, of the tree of `size` leaves
// with root `root`. With start = 0 it is an RFC 9162 consistency proof. The verifier walks the
// generating recursion down (pure index arithmetic), then rebuilds both roots from the bottom up.
import { SandboxAttestError } from "../errors.ts";
import type { TreeOps } from "./hasher.ts";
import { isValidSubtreeU64, toU64, type Position } from "./verify.ts";

/** Which side of the split the subtree lay on at one level of the recursion. */
type Step = "left" | "right" | "straddle";

function fail(why: string): never {
  throw new SandboxAttestError("ConsistencyProofInvalid", why);
}

function splitPoint64(n: bigint): bigint {
  let k = 1n;
  while (k << 1n < n) k <<= 1n;
  return k;
}

/** descend lists the recursion's steps from the top and whether the bottom node is known (not in the proof). */
function descend(start: bigint, end: bigint, size: bigint): { steps: Step[]; known: boolean } {
  const steps: Step[] = [];
  let [s, e, n, known] = [start, end, size, true];
  while (!(s === 0n && e === n)) {
    const k = splitPoint64(n);
    if (e <= k) {
      steps.push("right");
      n = k;
    } else if (s >= k) {
      steps.push("left");
      [s, e, n] = [s - k, e - k, n - k];
    } else {
      // A valid subtree that straddles k starts at 0: D[0:k] lies in both trees.
      steps.push("straddle");
      [e, n, known] = [e - k, n - k, false];
    }
  }
  return { steps, known };
}

/**
 * verifySubtreeConsistency checks a subtree consistency proof. An empty subtree (start = end ≤
 * size) is consistent with any tree when its root is the empty root and the proof is empty.
 * Throws ConsistencyProofInvalid for an invalid subtree, end > size, a proof of the wrong length,
 * or a root that does not match.
 */
export function verifySubtreeConsistency<N>(
  ops: TreeOps<N>,
  start: Position,
  end: Position,
  size: Position,
  subRoot: N,
  root: N,
  proof: readonly N[],
): void {
  const [s, e, n] = [toU64("start", start), toU64("end", end), toU64("size", size)];
  if (!isValidSubtreeU64(s, e)) fail(`[${s}, ${e}) is not a valid subtree`);
  if (e > n) fail(`subtree end ${e} exceeds size ${n}`);
  if (s === e) {
    if (proof.length > 0 || !ops.equal(subRoot, ops.empty()))
      fail("an empty subtree needs the empty root and an empty proof");
    return;
  }
  const { steps, known } = descend(s, e, n);
  if (proof.length !== steps.length + (known ? 0 : 1))
    fail(`proof has ${proof.length} elements, want ${steps.length + (known ? 0 : 1)}`);
  let at = known ? 0 : 1;
  let older = known ? subRoot : (proof[0] as N);
  let newer = older;
  for (let i = steps.length - 1; i >= 0; i--) {
    const p = proof[at++] as N;
    if (steps[i] === "right") newer = ops.combine(newer, p);
    else newer = ops.combine(p, newer);
    if (steps[i] === "straddle") older = ops.combine(p, older);
  }
  if (!ops.equal(older, subRoot)) fail("proof does not reproduce the subtree root");
  if (!ops.equal(newer, root)) fail("proof does not reproduce the tree root");
}
