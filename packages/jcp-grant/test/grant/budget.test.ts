// §4.3 "Containment of limits": an unlimited (null) calls or wall_ms lies inside no finite limit, in
// every place one budget is checked against another — the rule itself, attenuation, verification
// (the effective hook), a minted child against its template (§4.6), an amendment (§4.7).
import assert from "node:assert/strict";
import { test } from "node:test";
import { addressOf, chainGenesis, payloadOf, signPayload } from "@sbx/wire";
import { assertTightens, CheckpointLog } from "../../src/checkpoint/index.ts";
import {
  attenuate,
  budgetWithin,
  checkBudget,
  issueGrant,
  resolveChain,
  type Budget,
  type ChildFields,
  type EffectiveGrant,
} from "../../src/grant/index.ts";
import {
  createPolicy,
  MINT_LEDGER_TAG,
  MINT_PAYLOAD_TYPE,
  verifyMintLedger,
  type MintEntry,
} from "../../src/standing/index.ts";
import { ev, policyFields } from "../standing/fixtures.ts";
import { alice, bob, codeOf, HOUR, NOW, root, rootGrant } from "./fixtures.ts";

const b = (calls: number | null, wall_ms: number | null, uj = 10n): Budget => ({ uj, calls, wall_ms });

test("budgetWithin: an unlimited limit lies inside no finite one, in each dimension", () => {
  const cases: [Budget, Budget, boolean][] = [
    [b(null, 60), b(5, 60), false],
    [b(5, null), b(5, 60), false],
    [b(null, null), b(0, 0), false],
    [b(null, null), b(null, null), true],
    [b(5, 60), b(null, null), true],
    [b(5, 60), b(5, 60), true],
    [b(6, 60), b(5, 60), false],
    [b(5, 61), b(5, 60), false],
    [b(5, 60, 11n), b(5, 60), false],
  ];
  for (const [child, parent, want] of cases)
    assert.equal(budgetWithin(child, parent), want, JSON.stringify([child.calls, child.wall_ms]));
});

test("checkBudget reads the effective form and refuses any other (BadGrant)", () => {
  assert.deepEqual(checkBudget({ uj: "7", calls: null, wall_ms: 3 }), { uj: 7n, calls: null, wall_ms: 3 });
  for (const bad of [
    { uj: "7", calls: null },
    { uj: 7, calls: null, wall_ms: null },
    { uj: "7", calls: "1", wall_ms: null },
    { uj: "7", calls: -1, wall_ms: null },
    { uj: "7", calls: 1.5, wall_ms: null },
    { uj: "7", calls: 1, wall_ms: 1, x: 1 },
    [],
    null,
  ])
    assert.equal(
      codeOf(() => checkBudget(bad)),
      "BadGrant",
      JSON.stringify(bad),
    );
});

test("attenuation: a child cannot write null to lift a limit (BadGrant), and leaving it out inherits", () => {
  const chain = [rootGrant({ wall_ms: 60_000 })];
  for (const lift of [{ calls: null }, { wall_ms: null }])
    assert.equal(
      codeOf(() => attenuate(chain, alice, { holder: bob.did, ...lift } as unknown as ChildFields)),
      "BadGrant",
    );
  const leaf = resolveChain([...chain, attenuate(chain, alice, { holder: bob.did, uj: "1" })]).at(-1)!;
  assert.deepEqual([leaf.budget.calls, leaf.budget.wall_ms], [100, 60_000]);
});

test("verification: an effective hook that lifts a finite limit to unlimited is refused (BudgetExceeds)", () => {
  const chain = [rootGrant({ wall_ms: 60_000 })];
  const lift =
    (k: "calls" | "wall_ms") =>
    (_a: string, g: EffectiveGrant): EffectiveGrant => ({ ...g, budget: { ...g.budget, [k]: null } });
  assert.equal(
    codeOf(() => resolveChain(chain, { effective: lift("calls") })),
    "BudgetExceeds",
  );
  assert.equal(
    codeOf(() => resolveChain(chain, { effective: lift("wall_ms") })),
    "BudgetExceeds",
  );
});

test("§4.7: an amended grant with a lifted limit widens (AmendmentWidens); null is no amendment (BadAmendment)", () => {
  const chain = [rootGrant()];
  const cur = resolveChain(chain)[0]!;
  const lifted = { ...cur, budget: { ...cur.budget, calls: null } };
  assert.equal(
    codeOf(() => assertTightens(lifted, cur, { uj: 0n, calls: 0, wall_ms: 0 })),
    "AmendmentWidens",
  );
  const log = new CheckpointLog(chain);
  log.checkpoint(alice, {
    state: `blake3:${"5".repeat(64)}`,
    spent: { uj: 0n, calls: 0, wall_ms: 0 },
    at_ms: NOW,
  });
  assert.equal(
    codeOf(() => log.amend(root, { calls: null } as unknown as { calls: number }, NOW + 1)),
    "BadAmendment",
  );
});

test("§4.6: a child inheriting unlimited calls lies outside a template with calls (TemplateExceeded)", () => {
  const held = [
    issueGrant(root, {
      holder: alice.did,
      resources: ["/fs/work/**"],
      actions: ["read", "write"],
      uj: "5000000",
      exp_ms: NOW + 24 * HOUR,
      depth: 4,
    }),
  ];
  const policy = createPolicy(root, policyFields(held[0]!));
  const pAddr = addressOf(payloadOf(policy));
  const event = ev(0);
  const t = policyFields(held[0]!).template;
  const child = attenuate(held, alice, {
    holder: t.holder,
    resources: t.resources,
    actions: t.actions,
    uj: t.uj,
    nbf_ms: NOW,
    exp_ms: NOW + HOUR,
    depth: 0,
    mint: { policy: pAddr, event: addressOf(event) },
  });
  assert.equal(resolveChain([...held, child]).at(-1)!.budget.calls, null);
  const entry: MintEntry = {
    policy: pAddr,
    seq: 1,
    prev: chainGenesis(MINT_LEDGER_TAG, [pAddr]),
    event: addressOf(event),
    child: addressOf(payloadOf(child)),
    uj: t.uj,
    at_ms: NOW,
    minter: alice.did,
  };
  const input = {
    held,
    policy,
    entries: [signPayload(MINT_PAYLOAD_TYPE, entry, alice)],
    events: [event],
    children: [child],
    roots: [root.did],
  };
  assert.equal(
    codeOf(() => verifyMintLedger(input)),
    "TemplateExceeded",
  );
  const noCalls = { ...t };
  delete noCalls.calls;
  const open = createPolicy(root, policyFields(held[0]!, { template: noCalls }));
  const openAddr = addressOf(payloadOf(open));
  const openChild = attenuate(held, alice, {
    holder: t.holder,
    resources: t.resources,
    actions: t.actions,
    uj: t.uj,
    nbf_ms: NOW,
    exp_ms: NOW + HOUR,
    depth: 0,
    mint: { policy: openAddr, event: addressOf(event) },
  });
  const openEntry = {
    ...entry,
    policy: openAddr,
    prev: chainGenesis(MINT_LEDGER_TAG, [openAddr]),
    child: addressOf(payloadOf(openChild)),
  };
  const ok = verifyMintLedger({
    ...input,
    policy: open,
    entries: [signPayload(MINT_PAYLOAD_TYPE, openEntry, alice)],
    children: [openChild],
  });
  assert.equal(ok.length, 1);
});
