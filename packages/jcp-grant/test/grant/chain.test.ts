// §4.4 attenuation and chain verification: each refusal by its code, inheritance, the hook.
import assert from "node:assert/strict";
import { test } from "node:test";
import { addressOf, signPayload, payloadOf, type Envelope } from "@sbx/wire";
import {
  attenuate,
  GrantCache,
  GRANT_PAYLOAD_TYPE,
  resolveChain,
  verifyChain,
  type EffectiveGrant,
} from "../../src/index.ts";
import { alice, bob, carol, codeOf, dave, extend, HOUR, mallory, NOW, root, rootGrant } from "./fixtures.ts";

const opts = { roots: [root.did], at_ms: NOW };
const verify = (chain: readonly Envelope[], at_ms = NOW) => verifyChain(chain, { ...opts, at_ms });

test("a child inherits omitted fields and verifies", () => {
  const chain = extend([rootGrant()], alice, { holder: bob.did, resources: ["/fs/work/src/**"], uj: "1000" });
  const { leaf, grants } = verify(chain);
  assert.deepEqual(leaf.scope.actions, ["read", "write"]);
  assert.equal(leaf.budget.uj, 1000n);
  assert.equal(leaf.budget.calls, 100);
  assert.equal(leaf.exp_ms, grants[0]!.exp_ms);
  assert.equal(leaf.nbf_ms, grants[0]!.nbf_ms);
  assert.equal(leaf.depth, 3);
});

test("attenuate refuses each widening with its code", () => {
  const r = [rootGrant()];
  const cases: [string, Parameters<typeof attenuate>[2]][] = [
    ["ScopeWidens", { holder: bob.did, resources: ["/fs/**"] }],
    ["ScopeWidens", { holder: bob.did, resources: ["/fs/workspace/**"] }],
    ["ScopeWidens", { holder: bob.did, actions: ["exec"] }],
    ["BudgetExceeds", { holder: bob.did, uj: "5000001" }],
    ["BudgetExceeds", { holder: bob.did, calls: 101 }],
    ["WindowWidens", { holder: bob.did, exp_ms: NOW + 25 * HOUR }],
    ["WindowWidens", { holder: bob.did, nbf_ms: NOW - 2 * HOUR }],
    ["DepthExhausted", { holder: bob.did, depth: 4 }],
    ["BadPattern", { holder: bob.did, resources: ["/fs/work/../etc"] }],
    ["BadGrant", { holder: bob.did, actions: ["write", "read"] }],
  ];
  for (const [code, f] of cases)
    assert.equal(
      codeOf(() => attenuate(r, alice, f)),
      code,
      JSON.stringify(f),
    );
  assert.equal(
    codeOf(() => attenuate(r, bob, { holder: carol.did })),
    "NotHolder",
  );
});

test("a child without wall_ms under a parent with wall_ms inherits it (never unlimited)", () => {
  const r = rootGrant({ wall_ms: 60_000 });
  const chain = extend([r], alice, { holder: bob.did });
  assert.equal(verify(chain).leaf.budget.wall_ms, 60_000);
});

test("depth runs out: a depth-0 grant cannot delegate", () => {
  let chain = [rootGrant({ depth: 1 })];
  chain = extend(chain, alice, { holder: bob.did });
  assert.equal(verify(chain).leaf.depth, 0);
  assert.equal(
    codeOf(() => attenuate(chain, bob, { holder: carol.did })),
    "DepthExhausted",
  );
  // Signed directly, bypassing attenuate: verification refuses it too.
  const p = {
    issuer: bob.did,
    holder: carol.did,
    parent: verify(chain).leaf.address,
    exp_ms: NOW + HOUR,
    depth: 0,
    nonce: "0".repeat(32),
  };
  assert.equal(
    codeOf(() => verify([...chain, signPayload(GRANT_PAYLOAD_TYPE, p, bob)])),
    "DepthExhausted",
  );
});

test("verification refusals: root trust, links, signer, time", () => {
  const r = rootGrant();
  const c = attenuate([r], alice, { holder: bob.did });
  const d = attenuate([r, c], bob, { holder: carol.did });
  assert.equal(
    codeOf(() => verifyChain([r, c], { roots: [mallory.did], at_ms: NOW })),
    "UntrustedRoot",
  );
  assert.equal(
    codeOf(() => verify([c])),
    "BrokenChain",
  );
  assert.equal(
    codeOf(() => verify([r, d])),
    "BrokenChain",
  );
  assert.equal(
    codeOf(() => verify([r, c, r])),
    "BrokenChain",
  );
  assert.equal(
    codeOf(() => verify([])),
    "BrokenChain",
  );
  assert.equal(
    codeOf(() => verify([r, c], NOW - 2 * HOUR)),
    "NotYetValid",
  );
  assert.equal(
    codeOf(() => verify([r, c], NOW + 24 * HOUR)),
    "Expired",
  );
  assert.equal(verify([r, c], NOW + 24 * HOUR - 1).grants.length, 2);
  // Signed by someone other than its issuer, with the issuer field kept.
  const forged = signPayload(GRANT_PAYLOAD_TYPE, payloadOf(c), mallory);
  assert.equal(
    codeOf(() => verify([r, forged])),
    "BadSignature",
  );
  // Issued by mallory, who does not hold the parent.
  const stolen = signPayload(
    GRANT_PAYLOAD_TYPE,
    { ...(payloadOf(c) as object), issuer: mallory.did },
    mallory,
  );
  assert.equal(
    codeOf(() => verify([r, stolen])),
    "BrokenChain",
  );
});

test("chain length and grant size are bounded", () => {
  let chain = [rootGrant({ depth: 15, holder: alice.did })];
  const ks = [alice, bob];
  for (let i = 0; i < 15; i++) chain = extend(chain, ks[i % 2]!, { holder: ks[(i + 1) % 2]!.did });
  assert.equal(verify(chain).grants.length, 16);
  assert.equal(
    codeOf(() => verify([...chain, chain[1]!])),
    "ChainTooLong",
  );
  const big = rootGrant({
    resources: Array.from(
      { length: 64 },
      (_, i) => `/fs/${String(i).padStart(3, "0")}/${"x".repeat(120)}/**`,
    ),
  });
  assert.equal(
    codeOf(() => verify([big])),
    "GrantTooLarge",
  );
});

test("the effective hook tightens, and may not widen", () => {
  const chain = extend([rootGrant()], alice, { holder: bob.did, uj: "1000" });
  const tighten = (_a: string, g: EffectiveGrant): EffectiveGrant => ({
    ...g,
    budget: { ...g.budget, uj: g.budget.uj / 2n },
  });
  const v = verifyChain(chain, { ...opts, effective: tighten });
  assert.equal(v.leaf.budget.uj, 500n);
  assert.equal(v.grants[0]!.budget.uj, 2_500_000n);
  const widen = (_a: string, g: EffectiveGrant): EffectiveGrant => ({ ...g, exp_ms: g.exp_ms + 1 });
  assert.equal(
    codeOf(() => verifyChain(chain, { ...opts, effective: widen })),
    "WindowWidens",
  );
  // Tightening a parent below a child's budget makes the child stick out.
  const parentOnly = (a: string, g: EffectiveGrant): EffectiveGrant =>
    a === v.grants[0]!.address ? { ...g, budget: { ...g.budget, uj: 10n } } : g;
  assert.equal(
    codeOf(() => verifyChain(chain, { ...opts, effective: parentOnly })),
    "BudgetExceeds",
  );
});

test("the grant cache skips signature work but not the checks around it", () => {
  const cache = new GrantCache(8);
  const chain = extend(extend([rootGrant()], alice, { holder: bob.did }), bob, { holder: dave.did });
  verifyChain(chain, { ...opts, cache });
  assert.equal(cache.size, 3);
  assert.equal(verifyChain(chain, { ...opts, cache }).grants.length, 3);
  assert.equal(
    codeOf(() => verifyChain(chain, { ...opts, cache, at_ms: NOW + 25 * HOUR })),
    "Expired",
  );
  assert.equal(
    codeOf(() => verifyChain(chain, { roots: [mallory.did], at_ms: NOW, cache })),
    "UntrustedRoot",
  );
  assert.equal(resolveChain(chain, { cache }).length, 3);
});

test("a minted child carries its citation and verifies as an ordinary child", () => {
  const cite = { policy: addressOf({ p: 1 }), event: addressOf({ e: 1 }) };
  const chain = extend([rootGrant()], alice, { holder: bob.did, uj: "10", mint: cite });
  assert.deepEqual({ ...(payloadOf(chain[1]!) as { mint: object }).mint }, cite);
  assert.equal(verify(chain).leaf.budget.uj, 10n);
  assert.equal(
    codeOf(() => extend([rootGrant()], alice, { holder: bob.did, resources: ["/**"], mint: cite })),
    "ScopeWidens",
  );
});
