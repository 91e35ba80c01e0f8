// jcp §4.2 exec resources onto the exec gate (sandbox-attest §5.5, §5.6 item 6): a grant names the
// programs its unit may execute by content, as resources `/exec/<digest>` (a BLAKE3 address,
// `/exec/blake3:<64 hex>`) with the action `exec`. When the leaf's scope names any `/exec/…`
// resource, the run is gated by an allowlist of exactly the digests granted (every file executed
// counts, §5.5.1: the shell, the ELF interpreter, each program); `/exec/*` and `/exec/**` grant
// every program and restrict nothing. Resources under /exec/ without the `exec` action, or not of
// those forms, grant nothing (fail closed: a scope that names /exec/ but grants no digest runs
// nothing). A scope that names no /exec/ resource leaves execution to the run's own exec policy.
// Composed with an exec policy the run is also given (--exec-policy), both hold: the allowlist is
// the grant's digests the policy also allows, and the policy's deny list still wins.
import type { Scope } from "@sbx/jcp-grant/grant";
import { isDigest, type Digest } from "@sbx/wire";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";

/** What a scope grants to execute: nothing said, every program, or exactly these digests. */
export type ExecGrant =
  | { readonly kind: "unsaid" }
  | { readonly kind: "any" }
  | { readonly kind: "digests"; readonly digests: readonly Digest[] };

/** execGrant reads the exec resources of a scope (see the module comment). */
export function execGrant(scope: Scope): ExecGrant {
  const named = scope.resources.filter((r) => r === "/exec/**" || r.startsWith("/exec/"));
  if (named.length === 0) return { kind: "unsaid" };
  if (!scope.actions.includes("exec")) return { kind: "digests", digests: [] };
  if (named.some((r) => r === "/exec/**" || r === "/exec/*")) return { kind: "any" };
  const digests = named.map((r) => r.slice("/exec/".length)).filter((d): d is Digest => isDigest(d));
  return { kind: "digests", digests };
}

/**
 * unionExecGrant is what a grant set (several chains, each governing its own resources) grants to
 * execute: every program when a leaf grants any; otherwise the union of the digests the leaves name
 * (a leaf that names no /exec/ resource adds none); unsaid when no leaf names one.
 */
export function unionExecGrant(scopes: readonly Scope[]): ExecGrant {
  const gs = scopes.map(execGrant);
  if (gs.some((g) => g.kind === "any")) return { kind: "any" };
  const said = gs.flatMap((g) => (g.kind === "digests" ? [g.digests] : []));
  if (said.length === 0) return { kind: "unsaid" };
  return { kind: "digests", digests: [...new Set(said.flat())] };
}

/**
 * grantExecPolicy returns the exec policy a run under `scope` is gated by, or null when neither the
 * grant nor `given` (the run's own --exec-policy) restricts execution. With both, an allowlist of
 * the granted digests that `given` allows (its allow list in allowlist mode; all in denylist mode)
 * and `given`'s deny list.
 */
export function grantExecPolicy(
  scope: Scope | readonly Scope[],
  given: ExecPolicy | null,
): ExecPolicy | null {
  const g = Array.isArray(scope) ? unionExecGrant(scope as readonly Scope[]) : execGrant(scope as Scope);
  if (g.kind === "unsaid" || g.kind === "any") return given;
  if (given === null) return makePolicy("allowlist", g.digests, []);
  const allowed = given.mode === "allowlist" ? g.digests.filter((d) => given.allow.includes(d)) : g.digests;
  return makePolicy("allowlist", allowed, given.deny);
}
