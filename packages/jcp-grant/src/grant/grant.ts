// §4.1 The grant object: its wire form, the checks of that form, and its resolution into an
// effective grant (every field present, omitted fields taken from the parent).
import { isAmount, isDidKey, isDigest, parseAmount, type Amount, type Digest } from "@sbx/wire";
import { JcpError } from "../errors.ts";
import type { Budget } from "./budget.ts";
import { MAX_DEPTH } from "./limits.ts";
import { checkActions, checkResources, type Scope } from "./scope.ts";

/** The scope member as signed: in a child either list may be left out (it inherits). */
export interface ScopeFields {
  readonly resources?: readonly string[];
  readonly actions?: readonly string[];
}

/** The budget member as signed: in a child any field may be left out (it inherits). */
export interface BudgetFields {
  readonly uj?: Amount;
  readonly calls?: number;
  readonly wall_ms?: number;
}

/** A grant payload exactly as signed (§4.1). */
export interface GrantPayload {
  readonly issuer: string;
  readonly holder: string;
  readonly parent: Digest | null;
  readonly scope?: ScopeFields;
  readonly budget?: BudgetFields;
  readonly nbf_ms?: number;
  readonly exp_ms: number;
  readonly depth?: number;
  readonly nonce: string;
  /** Only in a child minted under a standing grant (§4.6): the mint policy and the event it cites. */
  readonly mint?: MintCitation;
}

/** What a minted child cites (§4.1 checks the form; §4.6 gives the meaning). */
export interface MintCitation {
  readonly policy: Digest;
  readonly event: Digest;
}

/** A grant with every field resolved (§4.1): what containment, spend and time checks read. */
export interface EffectiveGrant {
  readonly address: Digest;
  readonly issuer: string;
  readonly holder: string;
  readonly parent: Digest | null;
  readonly scope: Scope;
  readonly budget: Budget;
  readonly nbf_ms: number;
  readonly exp_ms: number;
  readonly depth: number;
}

const GRANT_KEYS = new Set([
  "issuer",
  "holder",
  "parent",
  "scope",
  "budget",
  "nbf_ms",
  "exp_ms",
  "depth",
  "nonce",
  "mint",
]);
const NONCE_RE = /^[0-9a-f]{32}$/;

function bad(why: string): JcpError {
  return new JcpError("BadGrant", why);
}
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
function onlyKeys(o: Record<string, unknown>, allowed: readonly string[], what: string): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) throw bad(`${what} has unknown member ${JSON.stringify(k.slice(0, 40))}`);
  if (Object.keys(o).length === 0) throw bad(`${what} is empty; leave it out to inherit`);
}
function count(v: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0 || v > max)
    throw bad(`${what} must be an integer from 0 to ${max}`);
  return v;
}
function stringList(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string"))
    throw bad(`${what} must be a list of strings`);
  return v;
}

function checkScope(v: unknown): void {
  if (!isObject(v)) throw bad("scope must be an object");
  onlyKeys(v, ["resources", "actions"], "scope");
  if (v.resources !== undefined) checkResources(stringList(v.resources, "scope.resources"));
  if (v.actions !== undefined) checkActions(stringList(v.actions, "scope.actions"));
}

function checkBudget(v: unknown): void {
  if (!isObject(v)) throw bad("budget must be an object");
  onlyKeys(v, ["uj", "calls", "wall_ms"], "budget");
  if (v.uj !== undefined && !isAmount(v.uj)) throw bad("budget.uj must be a decimal amount string");
  if (v.calls !== undefined) count(v.calls, "budget.calls");
  if (v.wall_ms !== undefined) count(v.wall_ms, "budget.wall_ms");
}

/**
 * checkGrantPayload checks a parsed payload against the grant form (§4.1) and returns it typed.
 * Refuses (`BadGrant`) unknown or missing members, principals that are not Ed25519 did:keys, a
 * parent that is neither null nor a digest, bad counts or amounts, depth above 15, an empty
 * window (nbf_ms ≥ exp_ms), a nonce other than 32 lowercase hex, a root (parent null) that does
 * not state scope.resources, scope.actions, budget.uj and depth, a `mint` member on a root or not of
 * the form {policy, event} with both digests; `BadPattern` for a bad pattern.
 */
export function checkGrantPayload(v: unknown): GrantPayload {
  if (!isObject(v)) throw bad("grant payload must be an object");
  for (const k of Object.keys(v))
    if (!GRANT_KEYS.has(k)) throw bad(`unknown member ${JSON.stringify(k.slice(0, 40))}`);
  if (!isDidKey(v.issuer)) throw bad("issuer must be an Ed25519 did:key");
  if (!isDidKey(v.holder)) throw bad("holder must be an Ed25519 did:key");
  if (v.parent !== null && !isDigest(v.parent)) throw bad("parent must be null or a blake3 digest");
  if (v.scope !== undefined) checkScope(v.scope);
  if (v.budget !== undefined) checkBudget(v.budget);
  const exp = count(v.exp_ms, "exp_ms");
  if (v.nbf_ms !== undefined && count(v.nbf_ms, "nbf_ms") >= exp) throw bad("nbf_ms must be before exp_ms");
  if (v.depth !== undefined) count(v.depth, "depth", MAX_DEPTH);
  if (typeof v.nonce !== "string" || !NONCE_RE.test(v.nonce))
    throw bad("nonce must be 32 lowercase hex digits");
  if (v.mint !== undefined) checkMint(v.mint, v.parent);
  if (v.parent === null) checkRootComplete(v as unknown as GrantPayload);
  return v as unknown as GrantPayload;
}

function checkMint(m: unknown, parent: unknown): void {
  if (parent === null) throw bad("a root is not minted");
  if (
    !isObject(m) ||
    Object.keys(m).sort().join(",") !== "event,policy" ||
    !isDigest(m.policy) ||
    !isDigest(m.event)
  )
    throw bad("mint is {policy, event}, both digests");
}

/** checkRootComplete: a root has no parent to inherit from, so it states scope, budget.uj and depth (`BadGrant`). */
function checkRootComplete(g: GrantPayload): void {
  if (!g.scope?.resources || !g.scope.actions)
    throw bad("a root grant states scope.resources and scope.actions");
  if (g.budget?.uj === undefined) throw bad("a root grant states budget.uj");
  if (g.depth === undefined) throw bad("a root grant states depth");
}

/** resolveRoot fills a root's effective grant. */
function resolveRoot(g: GrantPayload, address: Digest): EffectiveGrant {
  const { resources, actions } = g.scope ?? {};
  if (!resources || !actions || g.budget?.uj === undefined || g.depth === undefined)
    throw bad("a root grant states scope, budget.uj and depth");
  const budget = {
    uj: parseAmount(g.budget.uj),
    calls: g.budget.calls ?? null,
    wall_ms: g.budget.wall_ms ?? null,
  };
  return {
    address,
    issuer: g.issuer,
    holder: g.holder,
    parent: null,
    scope: { resources, actions },
    budget,
    nbf_ms: g.nbf_ms ?? 0,
    exp_ms: g.exp_ms,
    depth: g.depth,
  };
}

/**
 * resolveGrant returns the effective grant of a checked payload (§4.1): a root must state scope,
 * budget.uj and depth (`BadGrant`); a child takes every omitted field from `parent` (depth omitted
 * is the parent's minus one). Resolution never checks containment; attenuation does (§4.4).
 */
export function resolveGrant(
  g: GrantPayload,
  address: Digest,
  parent: EffectiveGrant | null,
): EffectiveGrant {
  if (parent === null) return resolveRoot(g, address);
  const b = g.budget ?? {};
  return {
    address,
    issuer: g.issuer,
    holder: g.holder,
    parent: g.parent,
    scope: {
      resources: g.scope?.resources ?? parent.scope.resources,
      actions: g.scope?.actions ?? parent.scope.actions,
    },
    budget: {
      uj: b.uj === undefined ? parent.budget.uj : parseAmount(b.uj),
      calls: b.calls ?? parent.budget.calls,
      wall_ms: b.wall_ms ?? parent.budget.wall_ms,
    },
    nbf_ms: g.nbf_ms ?? parent.nbf_ms,
    exp_ms: g.exp_ms,
    depth: g.depth ?? parent.depth - 1,
  };
}
