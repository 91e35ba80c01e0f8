// §4.6 standing grants: minting, each refusal by its code, and ledger verification.
import assert from "node:assert/strict";
import { test } from "node:test";
import { signPayload, payloadOf, type Envelope } from "@sbx/wire";
import { verifyChain } from "../../src/grant/index.ts";
import {
  createPolicy,
  MINT_PAYLOAD_TYPE,
  signEvent,
  StandingMinter,
  verifyMintLedger,
  type MintEntry,
} from "../../src/standing/index.ts";
import {
  alice,
  bob,
  codeOf,
  ev,
  HOUR,
  mallory,
  NOW,
  policyFields,
  root,
  rootGrant,
  source,
  standing,
} from "./fixtures.ts";

function run(n: number, step_ms: number, over = {}) {
  const s = standing(over);
  const m = new StandingMinter(s, alice);
  const events: unknown[] = [];
  const children: Envelope[] = [];
  for (let i = 0; i < n; i++) {
    const e = ev(i, NOW + i * step_ms);
    const r = m.mint(e, NOW + i * step_ms);
    events.push(e);
    children.push(r.child);
  }
  return {
    s,
    m,
    events,
    children,
    input: { ...s, entries: [...m.entries], events, children, roots: [root.did] },
  };
}

test("a minted child verifies through the normal chain and cites policy and event", () => {
  const { s, m } = run(0, 0);
  const r = m.mint(ev(1), NOW);
  const { leaf } = verifyChain(r.chain, { roots: [root.did], at_ms: NOW + 1 });
  assert.equal(leaf.holder, bob.did);
  assert.equal(leaf.budget.uj, 100000n);
  assert.equal(leaf.exp_ms, NOW + HOUR);
  const child = payloadOf(r.child) as { mint: { policy: string } };
  assert.equal(child.mint.policy, m.book.policy.address);
  assert.ok(s.policy);
});

test("a ledger verifies: head, length, total and children", () => {
  const { input, children } = run(5, 30_000);
  const sum = verifyMintLedger(input);
  assert.equal(sum.length, 5);
  assert.equal(sum.total_uj, 500000n);
  assert.equal(sum.children.length, children.length);
});

test("the minter refuses each constraint with its code", () => {
  const m = new StandingMinter(standing(), alice);
  m.mint(ev(1), NOW);
  assert.equal(
    codeOf(() => m.mint(ev(1), NOW + 1)),
    "EventReplayed",
  );
  assert.equal(
    codeOf(() => m.mint(ev(2, NOW, { source: "gitlab" }), NOW + 1)),
    "TriggerMismatch",
  );
  assert.equal(
    codeOf(() => m.mint({ type: "alert", source: "pager", at_ms: NOW }, NOW)),
    "TriggerMismatch",
  );
  assert.equal(
    codeOf(() => m.mint(signEvent({ type: "alert", source: "pager", at_ms: NOW }, mallory), NOW)),
    "TriggerMismatch",
  );
  assert.equal(
    codeOf(() => m.mint(signEvent({ type: "alert", source: "pager", at_ms: NOW }, source), NOW)),
    "ok",
  );
  m.mint(ev(3), NOW + 2);
  assert.equal(
    codeOf(() => m.mint(ev(4), NOW + 3)),
    "RateExceeded",
  );
  assert.equal(
    codeOf(() => m.mint(ev(4), NOW + 60_000)),
    "ok",
  );
  assert.equal(
    codeOf(() => m.mint(ev(5, NOW + 12 * HOUR), NOW + 12 * HOUR)),
    "Expired",
  );
  assert.equal(
    codeOf(() => m.mint({ type: "ci.push" }, NOW + 60_001)),
    "BadEvent",
  );
});

test("count and total-budget caps", () => {
  assert.equal(
    codeOf(() => run(4, 60_000, { max_children: 3 })),
    "MintCapExceeded",
  );
  assert.equal(
    codeOf(() => run(3, 60_000, { max_total_uj: "250000" })),
    "MintBudgetExceeded",
  );
  assert.equal(
    codeOf(() => run(3, 60_000, { max_total_uj: "300000", max_children: 3 })),
    "ok",
  );
});

test("a policy not signed by the held grant's issuer is refused", () => {
  const held = [rootGrant()];
  const byAlice = createPolicy(alice, policyFields(held[0]!, { issuer: alice.did }));
  assert.equal(
    codeOf(() => new StandingMinter({ held, policy: byAlice }, alice)),
    "PolicyNotByIssuer",
  );
  assert.equal(
    codeOf(() => new StandingMinter(standing(), bob)),
    "NotHolder",
  );
  assert.equal(
    codeOf(() => standing({ max_children: 0 })),
    "BadPolicy",
  );
  assert.equal(
    codeOf(() => createPolicy(root, policyFields(held[0]!, { issuer: alice.did }))),
    "PolicyNotByIssuer",
  );
});

test("a template outside the held grant is refused when minting", () => {
  const m = new StandingMinter(
    standing({ template: { ...policyFields(rootGrant()).template, resources: ["/fs/**"] } }),
    alice,
  );
  assert.equal(
    codeOf(() => m.mint(ev(1), NOW)),
    "ScopeWidens",
  );
});

function resign(input: ReturnType<typeof run>["input"], i: number, over: Partial<MintEntry>) {
  const entries = input.entries.map((e, j) =>
    j === i ? signPayload(MINT_PAYLOAD_TYPE, { ...(payloadOf(e) as object), ...over }, alice) : e,
  );
  return { ...input, entries };
}

test("the verifier refuses a broken ledger with its code", () => {
  const { input } = run(4, 30_000);
  const e = input.entries;
  assert.equal(
    codeOf(() => verifyMintLedger({ ...input, entries: [e[0], e[2]] })),
    "BrokenMintLedger",
  );
  assert.equal(
    codeOf(() => verifyMintLedger({ ...input, entries: [e[1], e[0]] })),
    "BrokenMintLedger",
  );
  assert.equal(
    codeOf(() => verifyMintLedger({ ...input, entries: [e[0], e[0]] })),
    "BrokenMintLedger",
  );
  assert.equal(
    codeOf(() => verifyMintLedger(resign(input, 0, { uj: "1" }))),
    "BadMintEntry",
  );
  const forged = { ...input, entries: [signPayload(MINT_PAYLOAD_TYPE, payloadOf(e[0]!), mallory)] };
  assert.equal(
    codeOf(() => verifyMintLedger(forged)),
    "BadSignature",
  );
  assert.equal(
    codeOf(() => verifyMintLedger({ ...input, events: [] })),
    "BadMintEntry",
  );
  const tight = {
    ...input,
    policy: createPolicy(root, policyFields(rootGrant(), { rate: { count: 1, window_ms: 60_000 } })),
  };
  assert.equal(
    codeOf(() => verifyMintLedger(tight)),
    "BrokenMintLedger",
  );
});
