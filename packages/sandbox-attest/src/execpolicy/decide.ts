// §5.5.4 The decision function: deny is absolute; then the mode decides.
import type { Digest } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { makePolicy, type ExecPolicy } from "./policy.ts";

/**
 * The rule a decision matched (§5.5.4): `denied` (on the denylist, in either mode), `allowed` (on
 * the allowlist), `not-allowed` (allowlist mode, not listed), `default` (denylist mode, not listed).
 */
export type ExecRule = "denied" | "allowed" | "not-allowed" | "default";

/** One decision of the policy on one digest. */
export interface ExecVerdict {
  readonly allowed: boolean;
  readonly rule: ExecRule;
}

function has(list: readonly Digest[], d: Digest): boolean {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = list[mid]!;
    if (v === d) return true;
    if (v < d) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * decide applies a policy to the digest of a file about to be executed (§5.5.4): a denied digest
 * is refused whatever else lists it; otherwise allowlist mode runs only allowed digests and
 * denylist mode runs everything else. Refuses nothing; the lists must be sorted (parsePolicy).
 */
export function decide(p: ExecPolicy, digest: Digest): ExecVerdict {
  if (has(p.deny, digest)) return { allowed: false, rule: "denied" };
  if (has(p.allow, digest)) return { allowed: true, rule: "allowed" };
  return p.mode === "allowlist"
    ? { allowed: false, rule: "not-allowed" }
    : { allowed: true, rule: "default" };
}

/** assertAllowed is decide that throws `ExecDenied` on a refusal (§5.5.4). */
export function assertAllowed(p: ExecPolicy, digest: Digest): ExecVerdict {
  const v = decide(p, digest);
  if (!v.allowed) throw new SandboxAttestError("ExecDenied", `${digest} refused (${v.rule})`);
  return v;
}

/** withDigests returns the policy with digests added to or removed from one list (§5.5.2); refuses bad digests. */
export function withDigests(
  p: ExecPolicy,
  list: "allow" | "deny",
  op: "add" | "remove",
  digests: readonly string[],
): ExecPolicy {
  const drop = new Set(digests);
  const next = op === "add" ? [...p[list], ...digests] : p[list].filter((d) => !drop.has(d));
  return list === "allow" ? makePolicy(p.mode, next, p.deny) : makePolicy(p.mode, p.allow, next);
}

/** withMode returns the policy in another mode (§5.5.2). */
export function withMode(p: ExecPolicy, mode: ExecPolicy["mode"]): ExecPolicy {
  return makePolicy(mode, p.allow, p.deny);
}
