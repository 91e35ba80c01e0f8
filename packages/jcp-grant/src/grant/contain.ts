// §4.4 Attenuation: a child lies inside its parent in every dimension. These checks are exported so
// that every producer of children (attenuate, the §4.6 minter, the §4.7 amender) applies one rule.
import { JcpError } from "../errors.ts";
import { budgetWithin } from "./budget.ts";
import type { EffectiveGrant } from "./grant.ts";
import { scopeCovers } from "./scope.ts";

/** Which depth rule applies: a child is strictly shallower; a tightened grant may keep its depth. */
export type DepthRule = "child" | "tighten";

/**
 * assertNarrows checks that `narrow` lies inside `wide` in every dimension (§4.4), in this order:
 * depth (`DepthExhausted`: under "child" `wide.depth` must be above 0 and `narrow.depth` below it;
 * under "tighten" not above it), scope (`ScopeWidens`), budget (`BudgetExceeds`), validity window
 * (`WindowWidens`), and last a non-empty window of its own (`BadGrant`).
 */
export function assertNarrows(narrow: EffectiveGrant, wide: EffectiveGrant, rule: DepthRule): void {
  if (rule === "child" && wide.depth === 0)
    throw new JcpError("DepthExhausted", `${wide.address} has depth 0 and cannot delegate`);
  if (rule === "child" ? narrow.depth >= wide.depth : narrow.depth > wide.depth)
    throw new JcpError("DepthExhausted", `depth ${narrow.depth} is not below the parent's ${wide.depth}`);
  if (!scopeCovers(wide.scope, narrow.scope))
    throw new JcpError("ScopeWidens", `scope of ${narrow.address} is not inside ${wide.address}'s`);
  if (!budgetWithin(narrow.budget, wide.budget))
    throw new JcpError("BudgetExceeds", `budget of ${narrow.address} exceeds ${wide.address}'s`);
  if (narrow.nbf_ms < wide.nbf_ms || narrow.exp_ms > wide.exp_ms)
    throw new JcpError(
      "WindowWidens",
      `window [${narrow.nbf_ms}, ${narrow.exp_ms}) is not inside [${wide.nbf_ms}, ${wide.exp_ms})`,
    );
  if (narrow.nbf_ms >= narrow.exp_ms)
    throw new JcpError("BadGrant", `window [${narrow.nbf_ms}, ${narrow.exp_ms}) is empty`);
}

/**
 * assertChildOf checks the whole parent→child rule of §4.4: the child names the parent's address
 * (`BrokenChain`), is issued by the parent's holder (`BrokenChain`), and lies inside it
 * (assertNarrows with the "child" depth rule). A §4.6 minter calls this on every minted child.
 */
export function assertChildOf(child: EffectiveGrant, parent: EffectiveGrant): void {
  if (child.parent !== parent.address)
    throw new JcpError(
      "BrokenChain",
      `${child.address} names parent ${child.parent ?? "null"}, not ${parent.address}`,
    );
  if (child.issuer !== parent.holder)
    throw new JcpError(
      "BrokenChain",
      `${child.address} is issued by ${child.issuer}, not the parent's holder ${parent.holder}`,
    );
  assertNarrows(child, parent, "child");
}

/** isInside reports whether `narrow` lies inside `wide` (assertNarrows without the throw). */
export function isInside(narrow: EffectiveGrant, wide: EffectiveGrant, rule: DepthRule): boolean {
  try {
    assertNarrows(narrow, wide, rule);
    return true;
  } catch (e) {
    if (e instanceof JcpError) return false;
    throw e;
  }
}
