// Demo part 5: JCP grants (jcp §4.1–§4.5). A root grant with a joule budget, attenuated for a
// sub-agent, a metered spend debiting the whole chain, and the refusals: a child that tries to
// widen its scope or budget, a spend over budget, and a revoked grant.
import { testKey } from "@sbx/wire";
import {
  attenuate,
  grantsId,
  grantStore,
  isJcpError,
  issueGrant,
  RevocationList,
  SpendLedger,
  verifyChain,
  type EffectiveGrant,
} from "@sbx/jcp-grant";
import { check, type DemoContext } from "./context.ts";

const J = (uj: bigint | string) => `${(Number(uj) / 1e6).toFixed(3)} J`;

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isJcpError(e)) return e.code;
    throw e;
  }
  return "accepted";
}

export default function grants(ctx: DemoContext): Promise<void> {
  ctx.title("JCP grants: budgets in joules, attenuation, spend, revocation (jcp §4.1–§4.5)");
  const [steward, agent, sub, host] = [
    testKey("root-issuer"),
    testKey("alice"),
    testKey("bob"),
    testKey("host"),
  ];
  const now = Date.now();
  const root = issueGrant(steward, {
    holder: agent.did,
    resources: ["/fs/work/**", "/net/api.example.com/**"],
    actions: ["read", "write"],
    uj: "5000000",
    calls: 50,
    exp_ms: now + 3_600_000,
    depth: 2,
  });
  const trust = { roots: [steward.did], at_ms: now };
  const show = (g: EffectiveGrant) =>
    `${g.scope.resources.join(" ")} [${g.scope.actions.join(",")}], ${J(g.budget.uj)}, depth ${g.depth}`;
  ctx.say(`root grant (steward → agent): ${show(verifyChain([root], trust).leaf)}`);

  const child = attenuate([root], agent, {
    holder: sub.did,
    resources: ["/fs/work/src/**"],
    actions: ["read"],
    uj: "1500000",
  });
  const chain = [root, child];
  const v = verifyChain(chain, trust);
  check(
    v.leaf.budget.calls === 50 && v.leaf.depth === 1,
    "omitted calls and depth inherit (50 calls, depth 1)",
  );
  ctx.say(
    `attenuated for the sub-agent (agent → sub-agent): ${show(v.leaf)}; calls inherited: ${v.leaf.budget.calls}`,
  );

  const widen = refusal(() => attenuate(chain, sub, { holder: sub.did, resources: ["/fs/work/**"] }));
  check(widen === "ScopeWidens", "a grandchild wider than its parent is refused (ScopeWidens)");
  ctx.say(`sub-agent tries to widen /fs/work/src/** to /fs/work/**: refused, ${widen}`);
  const prefix = refusal(() =>
    attenuate([root], agent, { holder: sub.did, resources: ["/fs/workspace/**"] }),
  );
  check(prefix === "ScopeWidens", "/fs/work/** does not cover /fs/workspace/**");
  ctx.say(`/fs/work/** does not cover /fs/workspace/** (no prefix confusion): ${prefix}`);
  const more = refusal(() => attenuate(chain, sub, { holder: sub.did, uj: "2000000" }));
  check(more === "BudgetExceeds", "a grandchild with more joules than its parent is refused (BudgetExceeds)");
  ctx.say(`sub-agent tries to hand on 2 J out of its 1.5 J: refused, ${more}`);

  const ledger = new SpendLedger({ roots: [steward.did], hosts: [host.did] });
  ledger.spend(chain, host, { uj: "1200000", wall_ms: 850 }, now);
  const left = ledger.remaining();
  check(
    left.get(v.leaf.address)?.uj === "300000" && left.get(v.grants[0]!.address)?.uj === "3800000",
    "the spend debits both grants",
  );
  ctx.say(
    `host meters 1.2 J under the sub-agent's grant; remaining: sub-agent ${J(left.get(v.leaf.address)!.uj)}, root ${J(left.get(v.grants[0]!.address)!.uj)}`,
  );
  const over = refusal(() => ledger.spend(chain, host, { uj: "300001" }, now + 1));
  check(
    over === "Overspend" && ledger.receipts.length === 1,
    "a spend over the remaining budget is refused and records nothing",
  );
  ctx.say(`a further 0.300001 J would overspend the sub-agent's grant: refused, ${over}`);

  const replayed = SpendLedger.replay(grantStore(chain), ledger.receipts, {
    roots: [steward.did],
    hosts: [host.did],
  });
  check(
    replayed.remaining().get(v.leaf.address)?.uj === "300000",
    "a verifier recomputes the remaining budgets from the receipts",
  );
  ctx.say(`auditor replays the signed, hash-chained receipts: remaining budgets agree`);

  const revs = new RevocationList();
  revs.revoke(chain, agent, now + 2);
  const revoked = refusal(() => verifyChain(chain, { ...trust, at_ms: now + 3, revocations: revs }));
  check(revoked === "Revoked", "the revoked child no longer verifies");
  check(
    verifyChain([root], { ...trust, at_ms: now + 3, revocations: revs }).grants.length === 1,
    "the root is untouched",
  );
  ctx.say(`agent revokes the sub-agent's grant: child ${revoked}, root still valid`);
  ctx.say(`grants_id of the run under the sub-agent's grant: ${grantsId([v.leaf.address])}`);
  return Promise.resolve();
}
