// The JCP oracle, part 2 (jcp §4.1–§4.5): the ops of classes C11–C19 restated literally from the
// spec text, on the form checks of jcp-form.ts. Vector generation compares every C11–C19 vector's
// expectation with this oracle and with the implementation, and fails when any two disagree
// (generate/oracle.ts). Nothing here is imported from @sbx/jcp-grant.
import {
  addressOf,
  chainGenesis,
  chainNext,
  digestBytes,
  fromBase64,
  isDidKey as isDidKeyLike,
  isDigest,
  toBase64,
} from "@sbx/wire";
import type { Digest, Json, JsonObject } from "@sbx/wire";
import {
  amount,
  checkActions,
  checkResources,
  covers,
  no,
  openGrant,
  openSignedBy,
  parsePattern,
  Refused,
  scopeInside,
  type Effective,
} from "./jcp-form.ts";

/** What the oracle answers for one op: an output, or a refusal by code. */
export type OracleResult = { ok: true; output: Json } | { ok: false; error: string };

interface Revocation {
  grant: string;
  by: string;
  at_ms: number;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): boolean => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** resolve fills a grant's omitted members from its parent's effective grant (§4.1 "Omission inherits"). */
function resolve(p: JsonObject, address: Digest, parent: Effective | null): Effective {
  const s = (p.scope ?? {}) as Record<string, string[] | undefined>;
  const b = (p.budget ?? {}) as Record<string, unknown>;
  const pick = <T>(own: T | undefined, inherited: T): T => (own === undefined ? inherited : own);
  return {
    address,
    issuer: p.issuer as string,
    holder: p.holder as string,
    parent: p.parent as Digest | null,
    resources: pick(s.resources, parent?.resources ?? []),
    actions: pick(s.actions, parent?.actions ?? []),
    uj: b.uj === undefined ? (parent?.uj ?? 0n) : amount(b.uj),
    calls: pick(b.calls as number | undefined, parent ? parent.calls : null),
    wall_ms: pick(b.wall_ms as number | undefined, parent ? parent.wall_ms : null),
    nbf_ms: pick(p.nbf_ms as number | undefined, parent ? parent.nbf_ms : 0),
    exp_ms: p.exp_ms as number,
    depth: pick(p.depth as number | undefined, parent ? parent.depth - 1 : 0),
  };
}

/** notAbove: a limit `c` lies within `p`; a parent without a limit (null) bounds nothing. */
function notAbove(c: number | bigint | null, p: number | bigint | null): boolean {
  return p === null || (c !== null && c <= p);
}

/** §4.4 attenuation of child C under parent P, both effective, in the order the section lists. */
function attenuate(C: Effective, P: Effective): void {
  if (C.parent !== P.address || C.issuer !== P.holder) no("BrokenChain");
  if (!(P.depth > 0 && C.depth < P.depth)) no("DepthExhausted");
  if (!scopeInside(P, C)) no("ScopeWidens");
  if (!(notAbove(C.uj, P.uj) && notAbove(C.calls, P.calls) && notAbove(C.wall_ms, P.wall_ms)))
    no("BudgetExceeds");
  if (!(P.nbf_ms <= C.nbf_ms && C.exp_ms <= P.exp_ms)) no("WindowWidens");
  if (!(C.nbf_ms < C.exp_ms)) no("BadGrant");
}

/** A grant in force (§4.4 "Effective grants"): the resolved grant with what has tightened it. */
type InForce = (g: Effective) => Effective;

/** verifyChain is §4.4 "Chain verification", steps 1–4, with the §4.5 authority rule. */
function verifyChain(
  chain: unknown[],
  roots: string[],
  t: number,
  revs: Revocation[],
  inForce: InForce = (g) => g,
): Effective[] {
  if (chain.length === 0) no("BrokenChain");
  if (chain.length > 16) no("ChainTooLong");
  const out: Effective[] = [];
  for (const env of chain) {
    const g = openGrant(env);
    const P = out[out.length - 1];
    if (P === undefined) {
      if (g.payload.parent !== null) no("BrokenChain");
      if (!roots.includes(g.payload.issuer as string)) no("UntrustedRoot");
      const R = inForce(resolve(g.payload, g.address, null));
      if (!(R.nbf_ms < R.exp_ms)) no("BadGrant");
      out.push(R);
    } else {
      if (g.payload.parent === null) no("BrokenChain");
      const C = inForce(resolve(g.payload, g.address, P));
      attenuate(C, P);
      out.push(C);
    }
  }
  // §4.5: a revocation of G counts when its time is at or before t and its author issued G or a
  // grant above G on this chain.
  out.forEach((G, i) => {
    const entitled = out.slice(0, i + 1).map((x) => x.issuer);
    if (revs.some((r) => r.grant === G.address && r.at_ms <= t && entitled.includes(r.by))) no("Revoked");
  });
  for (const G of out) {
    if (t < G.nbf_ms) no("NotYetValid");
    if (t >= G.exp_ms) no("Expired");
  }
  return out;
}

function effectiveJson(g: Effective): Json {
  return {
    address: g.address,
    issuer: g.issuer,
    holder: g.holder,
    parent: g.parent,
    scope: { resources: g.resources, actions: g.actions },
    budget: { uj: g.uj.toString(), calls: g.calls, wall_ms: g.wall_ms },
    nbf_ms: g.nbf_ms,
    exp_ms: g.exp_ms,
    depth: g.depth,
  };
}

/** revocationList is §4.5's list check: each entry opened, chained from head₀, times non-decreasing. */
function revocationList(entries: unknown[]): { list: Revocation[]; heads: Digest[] } {
  const heads: Digest[] = [chainGenesis("jcp.revocation/1", [])];
  const list: Revocation[] = [];
  for (const env of entries) {
    const { payload: r } = openSignedBy(
      env,
      "application/vnd.jcp.revocation+json",
      4096,
      "BadRevocation",
      (p) => {
        if (Object.keys(p).sort().join() !== "at_ms,by,grant,prev,seq") no("BadRevocation");
        if (!isDigest(p.grant) || !isDigest(p.prev) || !isCount(p.seq) || !isCount(p.at_ms))
          no("BadRevocation");
        if (!isDidKeyLike(p.by)) no("BadRevocation");
      },
      "by",
    );
    const last = list[list.length - 1];
    if (r.seq !== list.length + 1 || r.prev !== heads[heads.length - 1]) no("BrokenRevocationList");
    if (last !== undefined && (r.at_ms as number) < last.at_ms) no("BrokenRevocationList");
    list.push({ grant: r.grant as string, by: r.by as string, at_ms: r.at_ms as number });
    heads.push(chainNext(heads[heads.length - 1]!, r));
  }
  return { list, heads };
}

/** spendReplay is §4.3 "Verifying spend": each receipt in the order given, then the remaining budgets. */
function spendReplay(o: JsonObject): Json {
  const revs = o.revocations === undefined ? [] : revocationList(o.revocations as unknown[]).list;
  const byAddress = new Map<string, unknown>();
  for (const env of o.grants as unknown[]) {
    const text = ((env ?? {}) as { payload?: unknown }).payload;
    const b = typeof text === "string" ? fromBase64(text) : null;
    if (b === null || toBase64(b) !== text) no("BadEnvelope");
    // The first grant given with an address is the one used; a later one is ignored.
    if (!byAddress.has(digestBytes(b))) byAddress.set(digestBytes(b), env);
  }
  const hosts = o.hosts as string[];
  const leaves = new Map<string, { seq: number; head: Digest; at_ms: number }>();
  const used = new Map<string, { uj: bigint; calls: number; wall_ms: number }>();
  const debited = new Map<string, Effective>();
  const overshoot = new Map<string, bigint>();
  for (const env of o.receipts as unknown[]) {
    const { payload: r } = openSignedBy(
      env,
      "application/vnd.jcp.spend+json",
      4096,
      "BadReceipt",
      checkReceiptForm,
      "host",
    );
    if (!hosts.includes(r.host as string)) no("UntrustedHost");
    const leaf = leaves.get(r.grant as string) ?? {
      seq: 0,
      head: chainGenesis("jcp.spend/1", [r.grant as Digest]),
      at_ms: 0,
    };
    if (r.seq !== leaf.seq + 1 || r.prev !== leaf.head || (r.at_ms as number) < leaf.at_ms)
      no("BrokenReceiptChain");
    const chain = findChain(r.grant as string, byAddress);
    const grants = verifyChain(chain, o.roots as string[], r.at_ms as number, revs);
    // §4.3 "Overshoot": a receipt stating energy beyond the budget debits exactly what was left
    // along its chain, the least of budget − used over its grants (0 when any is spent out).
    if (r.overshoot_uj !== undefined) {
      const lefts = grants.map((g) => g.uj - (used.get(g.address)?.uj ?? 0n));
      const least = lefts.reduce((a, b) => (b < a ? b : a));
      if (amount(r.uj) !== (least > 0n ? least : 0n)) no("BadOvershoot");
      for (const g of grants)
        overshoot.set(g.address, (overshoot.get(g.address) ?? 0n) + amount(r.overshoot_uj));
    }
    const after = grants.map((g) => {
      const u = used.get(g.address) ?? { uj: 0n, calls: 0, wall_ms: 0 };
      return {
        uj: u.uj + amount(r.uj),
        calls: u.calls + (r.calls as number),
        wall_ms: u.wall_ms + (r.wall_ms as number),
      };
    });
    grants.forEach((g, i) => {
      const u = after[i]!;
      if (!(notAbove(u.uj, g.uj) && notAbove(u.calls, g.calls) && notAbove(u.wall_ms, g.wall_ms)))
        no("Overspend");
    });
    grants.forEach((g, i) => {
      used.set(g.address, after[i]!);
      debited.set(g.address, g);
    });
    leaves.set(r.grant as string, {
      seq: r.seq,
      head: chainNext(leaf.head, r),
      at_ms: r.at_ms as number,
    });
  }
  const remaining: JsonObject = {};
  for (const a of [...debited.keys()].sort()) {
    const g = debited.get(a)!;
    const u = used.get(a)!;
    const left = (b: number | null, x: number) => (b === null ? null : Math.max(0, b - x));
    remaining[a] = {
      uj: (g.uj > u.uj ? g.uj - u.uj : 0n).toString(),
      calls: left(g.calls, u.calls),
      wall_ms: left(g.wall_ms, u.wall_ms),
    };
  }
  const over: JsonObject = {};
  for (const a of [...overshoot.keys()].sort()) over[a] = overshoot.get(a)!.toString();
  return { remaining, overshoot: over };
}

function checkReceiptForm(p: JsonObject): void {
  const keys = Object.keys(p).sort().join();
  const allowed = [
    "at_ms",
    "calls",
    "cites",
    "grant",
    "host",
    "overshoot_uj",
    "prev",
    "seq",
    "uj",
    "wall_ms",
  ];
  const required = ["at_ms", "calls", "grant", "host", "prev", "seq", "uj", "wall_ms"];
  const ks = keys.split(",");
  if (!required.every((k) => ks.includes(k)) || !ks.every((k) => allowed.includes(k))) no("BadReceipt");
  // §4.3: overshoot_uj, when present, is a decimal amount above zero.
  if ("overshoot_uj" in p) {
    let over = 0n;
    try {
      over = amount(p.overshoot_uj);
    } catch {
      no("BadReceipt");
    }
    if (over === 0n) no("BadReceipt");
  }
  if ("cites" in p) {
    // §4.3: cites is an object of exactly attestation and energy, both digests.
    const c = p.cites;
    if (c === null || typeof c !== "object" || Array.isArray(c)) no("BadReceipt");
    const o = c;
    if (Object.keys(o).sort().join() !== "attestation,energy") no("BadReceipt");
    if (!isDigest(o.attestation) || !isDigest(o.energy)) no("BadReceipt");
  }
  if (!isDigest(p.grant) || !isDigest(p.prev) || !isDidKeyLike(p.host)) no("BadReceipt");
  try {
    amount(p.uj);
  } catch {
    no("BadReceipt");
  }
  if (![p.seq, p.calls, p.wall_ms, p.at_ms].every(isCount)) no("BadReceipt");
}

/** findChain follows `parent` from the leaf through the grants given, root first (`BrokenChain`, `ChainTooLong`). */
function findChain(leaf: string, byAddress: Map<string, unknown>): unknown[] {
  const out: unknown[] = [];
  let at: string | null = leaf;
  while (at !== null) {
    if (out.length === 16) no("ChainTooLong");
    const env = byAddress.get(at);
    if (env === undefined) no("BrokenChain");
    out.unshift(env);
    at = openGrant(env).payload.parent as string | null;
  }
  return out;
}

/** grantSet checks §4.1 "Grant sets": digests, each once, at most 256 (`BadGrantSet`). */
function grantSetId(grants: unknown[], mustBeSorted: boolean): Json {
  if (grants.length > 256 || !grants.every(isDigest)) no("BadGrantSet");
  const sorted = [...(grants as string[])].sort();
  if (sorted.some((g, i) => i > 0 && sorted[i - 1] === g)) no("BadGrantSet");
  if (mustBeSorted && sorted.some((g, i) => g !== grants[i])) no("BadGrantSet");
  return { grants_id: addressOf({ type: "jcp.grant-set/1", grants: sorted }) };
}

/** effectiveBudget reads a budget as §5's outputs write it (§4.3): exactly uj, calls, wall_ms. */
function effectiveBudget(v: unknown): { uj: bigint; calls: number | null; wall_ms: number | null } {
  if (!isObj(v) || Object.keys(v).sort().join() !== "calls,uj,wall_ms") no("BadGrant");
  const limit = (x: unknown) => x === null || isCount(x);
  if (typeof v.uj !== "string" || !limit(v.calls) || !limit(v.wall_ms)) no("BadGrant");
  let uj: bigint;
  try {
    uj = amount(v.uj);
  } catch {
    no("BadGrant");
  }
  return { uj, calls: v.calls as number | null, wall_ms: v.wall_ms as number | null };
}

const OPS: Record<string, (o: JsonObject) => Json> = {
  "budget.within": (o) => {
    const P = effectiveBudget(o.parent);
    const C = effectiveBudget(o.child);
    return {
      within: notAbove(C.uj, P.uj) && notAbove(C.calls, P.calls) && notAbove(C.wall_ms, P.wall_ms),
    };
  },
  "grant.open": (o) => {
    const g = openGrant(o.envelope);
    return { address: g.address, payload: g.payload };
  },
  "pattern.covers": (o) => ({
    covers: covers(parsePattern(o.parent as string), parsePattern(o.child as string)),
  }),
  "scope.covers": (o) => {
    const [p, c] = [o.parent as JsonObject, o.child as JsonObject];
    for (const s of [p, c]) {
      checkResources(s.resources);
      checkActions(s.actions);
    }
    const scope = (s: JsonObject) => ({ resources: s.resources as string[], actions: s.actions as string[] });
    return { covers: scopeInside(scope(p), scope(c)) };
  },
  "chain.verify": (o) => {
    const revs = o.revocations === undefined ? [] : revocationList(o.revocations as unknown[]).list;
    const grants = verifyChain(o.chain as unknown[], o.roots as string[], o.at_ms as number, revs);
    return { grants: grants.map(effectiveJson) };
  },
  "spend.replay": spendReplay,
  "revocations.verify": (o) => {
    const { heads } = revocationList(o.entries as unknown[]);
    const p = o.prefix as { length: number; head: string } | undefined;
    if (p !== undefined && heads[p.length] !== p.head) no("BrokenRevocationList");
    return { head: heads[heads.length - 1]!, length: heads.length - 1 };
  },
  "grantset.id": (o) => grantSetId(o.grants as unknown[], false),
  "grantset.check": (o) => {
    const d = o.doc;
    if (!isObj(d) || Object.keys(d).sort().join() !== "grants,type" || d.type !== "jcp.grant-set/1")
      no("BadGrantSet");
    if (!Array.isArray(d.grants)) no("BadGrantSet");
    return grantSetId(d.grants, true);
  },
};

/**
 * checkpointOutput is checkpoint.verify (§4.7) for a valid log: the log's head and length, its
 * amendments counted, and the chain verified with the grant of the log replaced by the original
 * with each amendment's `set` applied in order ("The grant in force").
 */
function checkpointOutput(o: JsonObject): Json {
  const chain = o.chain as unknown[];
  const of = o.log_of === undefined ? chain.length - 1 : (o.log_of as number);
  const G = openGrant(chain[of]).address;
  const entries = (o.entries as { payload: string }[]).map(
    (e) => JSON.parse(Buffer.from(e.payload, "base64").toString("utf8")) as JsonObject,
  );
  let head = chainGenesis("jcp.checkpointlog/1", [G]);
  for (const e of entries) head = chainNext(head, e);
  const sets = entries.filter((e) => e.set !== undefined).map((e) => e.set as JsonObject);
  const amend = (g: Effective): Effective => {
    if (g.address !== G) return g;
    const a = { ...g };
    for (const set of sets) {
      if (set.resources !== undefined) a.resources = set.resources as string[];
      if (set.actions !== undefined) a.actions = set.actions as string[];
      if (set.uj !== undefined) a.uj = amount(set.uj);
      if (set.calls !== undefined) a.calls = set.calls as number;
      if (set.wall_ms !== undefined) a.wall_ms = set.wall_ms as number;
      if (set.exp_ms !== undefined) a.exp_ms = set.exp_ms as number;
      if (set.depth !== undefined) a.depth = set.depth as number;
    }
    return a;
  };
  const grants = verifyChain(chain, o.roots as string[], o.at_ms as number, [], amend);
  return { head, length: entries.length, amendments: sets.length, grants: grants.map(effectiveJson) };
}

/**
 * jcpOutputOracle computes the output a valid case of a JCP op that jcpOracle does not answer must
 * give (checkpoint.verify); undefined for any other op. It does not restate that op's refusals.
 */
export function jcpOutputOracle(op: string, input: Json): OracleResult | undefined {
  if (op !== "checkpoint.verify") return undefined;
  try {
    return { ok: true, output: checkpointOutput(input as JsonObject) };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.code };
    throw e;
  }
}

/** The ops this oracle answers. */
export const JCP_ORACLE_OPS: readonly string[] = Object.keys(OPS);

/** jcpOracle answers one op of C11–C19 from the spec's rules, or undefined for an op it does not know. */
export function jcpOracle(op: string, input: Json): OracleResult | undefined {
  const f = OPS[op];
  if (f === undefined) return undefined;
  try {
    return { ok: true, output: f(input as JsonObject) };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.code };
    throw e;
  }
}
