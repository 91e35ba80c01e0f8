// Demo part 8: a standing grant mints children for a burst of events until the rate limit refuses
// one (jcp §4.6); then the issuer tightens a running agent's budget mid-run and the agent's next
// spend past the new limit is refused (jcp §4.7).
import { addressOf, payloadOf, testKey } from "@sbx/wire";
import { isJcpError, issueGrant, SpendLedger, verifyChain } from "@sbx/jcp-grant/grant";
import { createPolicy, StandingMinter, verifyMintLedger } from "@sbx/jcp-grant/standing";
import { CheckpointLog } from "@sbx/jcp-grant/checkpoint";
import { check, type DemoContext } from "./context.ts";

const HOUR = 3_600_000;

function codeOf(f: () => unknown): string {
  try {
    f();
    return "ok";
  } catch (e) {
    if (isJcpError(e)) return e.code;
    throw e;
  }
}

function standing(ctx: DemoContext, t0: number): void {
  const issuer = testKey("root-issuer");
  const agent = testKey("alice");
  const worker = testKey("bob");
  const held = [
    issueGrant(issuer, {
      holder: agent.did,
      resources: ["/fs/work/**"],
      actions: ["read", "write"],
      uj: "5000000",
      nbf_ms: t0 - HOUR,
      exp_ms: t0 + 8 * HOUR,
      depth: 2,
    }),
  ];
  const policy = createPolicy(issuer, {
    grant: addressOf(payloadOf(held[0]!)),
    issuer: issuer.did,
    minter: agent.did,
    triggers: [{ type: "ci.push", source: "github" }],
    template: {
      holder: worker.did,
      resources: ["/fs/work/build/**"],
      actions: ["write"],
      uj: "200000",
      lifetime_ms: HOUR,
      depth: 0,
    },
    max_children: 10,
    max_total_uj: "2000000",
    rate: { count: 3, window_ms: 60_000 },
    nbf_ms: t0 - HOUR,
    exp_ms: t0 + 4 * HOUR,
  });
  ctx.say(`mint policy signed by the held grant's issuer: 3 children per minute, 10 in all, 0.2 J each`);
  const m = new StandingMinter({ policy, held }, agent);
  const events: unknown[] = [];
  const children: unknown[] = [];
  let refused = "";
  for (let i = 0; i < 5 && !refused; i++) {
    const ev = { type: "ci.push", source: "github", at_ms: t0 + i * 1000, id: `push-${i}` };
    const code = codeOf(() => {
      const r = m.mint(ev, t0 + i * 1000);
      verifyChain(r.chain, { roots: [issuer.did], at_ms: t0 + i * 1000 });
      events.push(ev);
      children.push(r.child);
    });
    ctx.say(
      `event push-${i} at +${i}s: ${code === "ok" ? `minted child ${m.book.length} (verifies through the normal chain)` : `refused ${code}`}`,
    );
    if (code !== "ok") refused = code;
  }
  check(refused === "RateExceeded", "the fourth event in one minute is refused by the rate limit");
  check(m.book.length === 3, "exactly three children minted in the burst");
  const sum = verifyMintLedger({
    policy,
    held,
    entries: [...m.entries],
    events,
    children,
    roots: [issuer.did],
  });
  check(sum.length === 3 && sum.total_uj === 600000n, "the ledger verifies: 3 children, 0.6 J");
  ctx.say(`ledger verified independently: ${sum.length} entries, ${sum.total_uj} µJ, head ${sum.head}`);
  const replay = codeOf(() => m.mint(events[0], t0 + 120_000));
  check(replay === "EventReplayed", "an event already used is refused");
  ctx.say(`the first event again, two minutes later: refused ${replay}`);
}

function amendment(ctx: DemoContext, t0: number): void {
  const issuer = testKey("root-issuer");
  const agent = testKey("alice");
  const host = testKey("host");
  const chain = [
    issueGrant(issuer, {
      holder: agent.did,
      resources: ["/fs/work/**"],
      actions: ["read", "write"],
      uj: "3000000",
      nbf_ms: t0 - HOUR,
      exp_ms: t0 + HOUR,
      depth: 1,
    }),
  ];
  const log = new CheckpointLog(chain);
  const ledger = new SpendLedger({ roots: [issuer.did], hosts: [host.did], effective: log.hook() });
  for (let i = 0; i < 2; i++) ledger.spend(chain, host, { uj: "500000" }, t0 + i);
  const used = ledger.used(log.original.address);
  ctx.say(`agent spent ${used.uj} µJ of 3 J under its grant`);
  log.checkpoint(agent, { state: addressOf({ step: 2 }), spent: used, at_ms: t0 + 10 });
  ctx.say(`agent checkpoint 1: spent ${used.uj} µJ, 0 amendments seen`);
  const byAgent = codeOf(() => log.amend(agent, { uj: "9000000" }, t0 + 11));
  check(byAgent === "SeparationOfDuties", "the holder cannot amend its own grant");
  ctx.say(`the agent tries to amend its own grant: refused ${byAgent}`);
  const widen = codeOf(() => log.amend(issuer, { uj: "4000000" }, t0 + 11));
  check(widen === "AmendmentWidens", "an amendment cannot widen");
  ctx.say(`the issuer tries to raise the budget to 4 J: refused ${widen}`);
  log.amend(issuer, { uj: "1200000" }, t0 + 12);
  ctx.say(`the issuer tightens the budget mid-run to 1.2 J (amendment 1, answering checkpoint 1)`);
  const eff = verifyChain(chain, { roots: [issuer.did], at_ms: t0 + 13, effective: log.hook() }).leaf;
  check(eff.budget.uj === 1200000n, "chain verification uses the grant in force");
  const next = codeOf(() => ledger.spend(chain, host, { uj: "300000" }, t0 + 14));
  check(next === "Overspend", "the agent's next spend past the new limit is refused");
  ctx.say(`agent's next spend of 0.3 J (1.3 J in all): refused ${next}`);
  const fits = codeOf(() => ledger.spend(chain, host, { uj: "200000" }, t0 + 15));
  check(fits === "ok", "a spend within the new limit is accepted");
  ctx.say(`a spend of 0.2 J (1.2 J in all) still fits: accepted`);
  log.checkpoint(agent, {
    state: addressOf({ step: 3 }),
    spent: ledger.used(log.original.address),
    at_ms: t0 + 16,
  });
  const again = CheckpointLog.replay(chain, log.entries);
  check(again.head === log.head && again.amendments === 1, "the log replays to the same head");
  ctx.say(`checkpoint 2 acknowledges the amendment; log of ${again.length} entries replays to ${again.head}`);
}

export default function standingDemo(ctx: DemoContext): Promise<void> {
  ctx.title("standing grants and amendments (jcp §4.6, §4.7)");
  const t0 = Date.now();
  standing(ctx, t0);
  amendment(ctx, t0);
  return Promise.resolve();
}
