// §4.4 Chain verification: a chain is a list of grant envelopes, root first. Every signature,
// link, containment, root trust, revocation and the time are checked, with bounded cost.
import type { Digest } from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { assertChildOf, assertNarrows } from "./contain.ts";
import { resolveGrant, type EffectiveGrant } from "./grant.ts";
import { MAX_CHAIN_LENGTH } from "./limits.ts";
import { openGrant, type GrantCache } from "./open.ts";
import type { RevocationIndex } from "./revoke.ts";

/**
 * An effective-grant hook: given a grant's address and its resolved form, returns the grant in force
 * (for §4.7, the original with its amendments applied). It may only tighten: its result must keep
 * address, parent, issuer and holder and lie inside what it was given, or the chain is refused.
 */
export type EffectiveHook = (address: Digest, resolved: EffectiveGrant) => EffectiveGrant;

/** What resolving a chain needs beyond the envelopes. */
export interface ResolveOptions {
  /** Replaces each resolved grant by the grant in force (§4.7); identity when absent. */
  readonly effective?: EffectiveHook;
  /** A cache of envelopes already opened (signature checks skipped for byte-identical ones). */
  readonly cache?: GrantCache;
  /** When given, the root's issuer must be one of these did:keys (`UntrustedRoot`). */
  readonly roots?: readonly string[];
}

/** What verifying a chain needs. */
export interface VerifyOptions extends ResolveOptions {
  /** The trusted root issuers (did:key). */
  readonly roots: readonly string[];
  /** The time of verification, Unix epoch milliseconds. */
  readonly at_ms: number;
  /** Revocations known to the verifier (§4.5). */
  readonly revocations?: RevocationIndex;
}

/** A verified chain: the effective grant of every link, root first, and the leaf. */
export interface VerifiedChain {
  readonly grants: readonly EffectiveGrant[];
  readonly leaf: EffectiveGrant;
}

function applyHook(g: EffectiveGrant, hook: EffectiveHook | undefined): EffectiveGrant {
  if (!hook) return g;
  const e = hook(g.address, g);
  if (e.address !== g.address || e.parent !== g.parent || e.issuer !== g.issuer || e.holder !== g.holder)
    throw new JcpError(
      "BrokenChain",
      `the effective grant of ${g.address} changes its identity or principals`,
    );
  assertNarrows(e, g, "tighten");
  return e;
}

/**
 * resolveChain opens and links a chain without the verifier's clock (§4.4 steps 1–3): length
 * (`BrokenChain` when empty, `ChainTooLong` above 16), each grant opened (openGrant's codes), the
 * root's parent null (`BrokenChain`) and, when `roots` is given, its issuer trusted
 * (`UntrustedRoot`), each child linked to and inside its parent (assertChildOf's codes), after the
 * effective hook. Returns the effective grants, root first.
 */
export function resolveChain(chain: readonly unknown[], opts: ResolveOptions = {}): EffectiveGrant[] {
  if (chain.length === 0) throw new JcpError("BrokenChain", "a chain holds at least its root");
  if (chain.length > MAX_CHAIN_LENGTH)
    throw new JcpError("ChainTooLong", `${chain.length} grants exceed ${MAX_CHAIN_LENGTH}`);
  const out: EffectiveGrant[] = [];
  for (const env of chain) {
    const { payload, address } = openGrant(env, opts.cache);
    const parent = out.length ? out[out.length - 1]! : null;
    if (!parent && payload.parent !== null)
      throw new JcpError("BrokenChain", "the first grant of a chain is a root (parent null)");
    if (!parent && opts.roots && !opts.roots.includes(payload.issuer))
      throw new JcpError("UntrustedRoot", `root issuer ${payload.issuer} is not trusted`);
    if (parent && (payload.parent !== parent.address || payload.issuer !== parent.holder))
      throw new JcpError("BrokenChain", `${address} is not issued under ${parent.address} by its holder`);
    if (parent && parent.depth === 0)
      throw new JcpError("DepthExhausted", `${parent.address} has depth 0 and cannot delegate`);
    const g = applyHook(resolveGrant(payload, address, parent), opts.effective);
    if (parent) assertChildOf(g, parent);
    else if (g.nbf_ms >= g.exp_ms) throw new JcpError("BadGrant", "the root's window is empty");
    out.push(g);
  }
  return out;
}

/** assertNotRevoked refuses (`Revoked`) a chain holding a grant revoked at or before `at_ms` by an issuer above or at it (§4.5). */
export function assertNotRevoked(
  grants: readonly EffectiveGrant[],
  idx: RevocationIndex,
  at_ms: number,
): void {
  const issuers = new Set<string>();
  for (const g of grants) {
    issuers.add(g.issuer);
    for (const r of idx.revocationsOf(g.address))
      if (r.at_ms <= at_ms && issuers.has(r.by))
        throw new JcpError("Revoked", `${g.address} was revoked by ${r.by} at ${r.at_ms}`);
  }
}

/** assertInWindow refuses a chain outside any grant's window at `at_ms`: `NotYetValid` before nbf_ms, `Expired` at or after exp_ms. */
export function assertInWindow(grants: readonly EffectiveGrant[], at_ms: number): void {
  for (const g of grants) {
    if (at_ms < g.nbf_ms)
      throw new JcpError("NotYetValid", `${g.address} is valid from ${g.nbf_ms}, now ${at_ms}`);
    if (at_ms >= g.exp_ms) throw new JcpError("Expired", `${g.address} expired at ${g.exp_ms}, now ${at_ms}`);
  }
}

/**
 * verifyChain verifies a chain of grant envelopes, root first, to a trusted root at `at_ms` (§4.4):
 * resolveChain with the trusted roots (every refusal it names), then revocation (`Revoked`), then
 * the time (`NotYetValid`, `Expired`). Returns the effective grants.
 */
export function verifyChain(chain: readonly unknown[], opts: VerifyOptions): VerifiedChain {
  if (!Number.isSafeInteger(opts.at_ms) || opts.at_ms < 0)
    throw new RangeError("verifyChain: at_ms must be a non-negative integer");
  const grants = resolveChain(chain, opts);
  if (opts.revocations) assertNotRevoked(grants, opts.revocations, opts.at_ms);
  assertInWindow(grants, opts.at_ms);
  return { grants, leaf: grants[grants.length - 1]! };
}
