// The reference handlers of the grant ops (jcp §4.1–§4.5), shared by classes C11–C19. Each op is
// registered by exactly one class (handlerTable refuses duplicates); the others' vectors use it.
import type { Envelope, Json, JsonObject } from "@sbx/wire";
import {
  budgetWithin,
  checkActions,
  checkBudget,
  checkGrantSetDoc,
  checkResources,
  grantStore,
  grantsId,
  openGrant,
  parsePattern,
  patternCovers,
  RevocationList,
  scopeCovers,
  SpendLedger,
  verifyChain,
  type EffectiveGrant,
  type Scope,
} from "@sbx/jcp-grant/grant";
import type { Handler } from "../../types.ts";
import { list, obj, str, strings } from "../input.ts";

function int(v: Json | undefined, what: string): number {
  if (typeof v !== "number") throw new TypeError(`${what} must be a number`);
  return v;
}
function scope(v: Json | undefined): Scope {
  const o = obj(v, "scope");
  return { resources: strings(o.resources, "resources"), actions: strings(o.actions, "actions") };
}

/** effectiveJson writes an effective grant in its wire form (uj as a decimal string). */
export function effectiveJson(g: EffectiveGrant): Json {
  return {
    address: g.address,
    issuer: g.issuer,
    holder: g.holder,
    parent: g.parent,
    scope: { resources: [...g.scope.resources], actions: [...g.scope.actions] },
    budget: { uj: g.budget.uj.toString(), calls: g.budget.calls, wall_ms: g.budget.wall_ms },
    nbf_ms: g.nbf_ms,
    exp_ms: g.exp_ms,
    depth: g.depth,
  };
}

function revocations(o: JsonObject): RevocationList | undefined {
  return o.revocations === undefined ? undefined : RevocationList.verify(list(o.revocations, "revocations"));
}

/** grant.open (C11): one envelope → its address and payload. */
export const grantOpen: Handler = (i) => {
  const g = openGrant(obj(i).envelope);
  return { address: g.address, payload: g.payload as unknown as Json };
};

/** pattern.covers and scope.covers (C12). */
export const patternCoversOp: Handler = (i) => {
  const o = obj(i);
  return {
    covers: patternCovers(parsePattern(str(o.parent, "parent")), parsePattern(str(o.child, "child"))),
  };
};
export const scopeCoversOp: Handler = (i) => {
  const [p, c] = [scope(obj(i).parent), scope(obj(i).child)];
  // Both scopes must be valid (§4.2), parent first, each resources then actions.
  for (const x of [p, c]) {
    checkResources(x.resources);
    checkActions(x.actions);
  }
  return { covers: scopeCovers(p, c) };
};

/** budget.within (C13): two effective budgets, each checked, parent first → whether child lies within parent. */
export const budgetWithinOp: Handler = (i) => {
  const o = obj(i);
  const parent = checkBudget(o.parent);
  return { within: budgetWithin(checkBudget(o.child), parent) };
};

/** chain.verify (C16; used by C13–C15, C18): chain, roots, at_ms, optional revocations → effective grants. */
export const chainVerify: Handler = (i) => {
  const o = obj(i);
  const rl = revocations(o);
  const v = verifyChain(list(o.chain, "chain"), {
    roots: strings(o.roots, "roots"),
    at_ms: int(o.at_ms, "at_ms"),
    ...(rl ? { revocations: rl } : {}),
  });
  return { grants: v.grants.map(effectiveJson) };
};

/** spend.replay (C17): grants, receipts, roots, hosts → every remaining budget and the overshoot recorded under each grant (§4.3). */
export const spendReplay: Handler = (i) => {
  const o = obj(i);
  const store = grantStore(list(o.grants, "grants") as unknown as Envelope[]);
  const rl = revocations(o);
  const led = SpendLedger.replay(store, list(o.receipts, "receipts"), {
    roots: strings(o.roots, "roots"),
    hosts: strings(o.hosts, "hosts"),
    ...(rl ? { revocations: rl } : {}),
  });
  const remaining: JsonObject = {};
  const overshoot: JsonObject = {};
  for (const [a, r] of [...led.remaining()].sort(([x], [y]) => (x < y ? -1 : 1))) {
    remaining[a] = { ...r };
    const over = led.overshootOf(a);
    if (over > 0n) overshoot[a] = over.toString();
  }
  return { remaining, overshoot };
};

/** revocations.verify (C18): entries and an optional prefix {length, head} → head and length. */
export const revocationsVerify: Handler = (i) => {
  const o = obj(i);
  const p = o.prefix === undefined ? undefined : obj(o.prefix, "prefix");
  const rl = RevocationList.verify(
    list(o.entries, "entries"),
    p
      ? { length: int(p.length, "prefix.length"), head: str(p.head, "prefix.head") as `blake3:${string}` }
      : undefined,
  );
  return { head: rl.head, length: rl.length };
};

/** grantset.id and grantset.check (C19). */
export const grantSetId: Handler = (i) => ({ grants_id: grantsId(list(obj(i).grants, "grants")) });
export const grantSetCheck: Handler = (i) => ({ grants_id: checkGrantSetDoc(obj(i).doc) });
