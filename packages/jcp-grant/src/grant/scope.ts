// §4.2 Scope: resource patterns and actions. A child scope lies inside its parent when each child
// pattern is covered by some parent pattern and the child's actions are a subset of the parent's.
import { JcpError } from "../errors.ts";
import { MAX_ACTIONS, MAX_RESOURCES } from "./limits.ts";
import { parsePattern, patternCovers, type Pattern } from "./pattern.ts";

/** A scope: sorted, duplicate-free lists of resource patterns and action names. */
export interface Scope {
  readonly resources: readonly string[];
  readonly actions: readonly string[];
}

const ACTION_RE = /^[a-z][a-z0-9._:-]{0,63}$/;

// Parsed patterns by text: verification parses the same patterns again and again.
const parsed = new Map<string, Pattern>();
function pattern(p: string): Pattern {
  let hit = parsed.get(p);
  if (!hit) {
    hit = parsePattern(p);
    if (parsed.size >= 4096) parsed.clear();
    parsed.set(p, hit);
  }
  return hit;
}

/** isSortedSet reports whether a list is strictly ascending (so sorted and duplicate-free). */
export function isSortedSet(xs: readonly string[]): boolean {
  for (let i = 1; i < xs.length; i++) if (!(xs[i - 1]! < xs[i]!)) return false;
  return true;
}

/**
 * checkResources validates a resource list (§4.2): 1 to 64 patterns, strictly ascending (`BadGrant`),
 * each a well-formed pattern (`BadPattern`).
 */
export function checkResources(xs: readonly string[]): void {
  if (xs.length === 0 || xs.length > MAX_RESOURCES)
    throw new JcpError("BadGrant", `scope.resources must hold 1 to ${MAX_RESOURCES} patterns`);
  if (!isSortedSet(xs))
    throw new JcpError("BadGrant", "scope.resources must be sorted and free of duplicates");
  for (const x of xs) pattern(x);
}

/** checkActions validates an action list (§4.2): 1 to 32 names `[a-z][a-z0-9._:-]*`, strictly ascending (`BadGrant`). */
export function checkActions(xs: readonly string[]): void {
  if (xs.length === 0 || xs.length > MAX_ACTIONS)
    throw new JcpError("BadGrant", `scope.actions must hold 1 to ${MAX_ACTIONS} names`);
  if (!isSortedSet(xs)) throw new JcpError("BadGrant", "scope.actions must be sorted and free of duplicates");
  for (const a of xs)
    if (!ACTION_RE.test(a))
      throw new JcpError("BadGrant", `action ${JSON.stringify(a.slice(0, 70))} is not a valid name`);
}

/** resourceCovered reports whether some pattern of `parent` covers the pattern `child` (§4.2). */
export function resourceCovered(parent: readonly string[], child: string): boolean {
  const c = pattern(child);
  return parent.some((p) => patternCovers(pattern(p), c));
}

/**
 * scopeCovers reports whether `child` lies inside `parent` (§4.2): every child pattern covered by a
 * parent pattern, every child action among the parent's. Refuses malformed patterns (`BadPattern`).
 */
export function scopeCovers(parent: Scope, child: Scope): boolean {
  const acts = new Set(parent.actions);
  return (
    child.actions.every((a) => acts.has(a)) &&
    child.resources.every((r) => resourceCovered(parent.resources, r))
  );
}

/**
 * scopeAllows reports whether a scope permits `action` on the concrete resource path `resource`
 * (§4.2): the action is listed and some pattern matches the path. Refuses a path with wildcards.
 */
export function scopeAllows(scope: Scope, action: string, resource: string): boolean {
  const r = parsePattern(resource);
  if (r.subtree || r.segments.includes("*"))
    throw new JcpError("BadPattern", "a resource path has no wildcards");
  return scope.actions.includes(action) && scope.resources.some((p) => patternCovers(pattern(p), r));
}
