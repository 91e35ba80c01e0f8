// Property (issue 8): for random amendment sequences the grant in force is always inside every
// earlier grant in force, and an amendment is accepted exactly when it tightens and keeps the
// budget at or above the spend checkpointed.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { addressOf } from "@sbx/wire";
import { isInside, type EffectiveGrant } from "../../src/grant/index.ts";
import { applyAmendment, CheckpointLog, type AmendmentSet } from "../../src/checkpoint/index.ts";
import { alice, HOUR, NOW, root, rootGrant } from "../grant/fixtures.ts";

const RES = [
  ["/fs/work/**"],
  ["/fs/work/src/**"],
  ["/fs/work/**", "/net/api.example.com/**"],
  ["/fs/**"],
  ["/net/api.example.com/v1/*"],
];
const ACTS = [["read"], ["write"], ["read", "write"], ["exec", "read"]];

const amendment: fc.Arbitrary<AmendmentSet> = fc
  .record(
    {
      resources: fc.constantFrom(...RES),
      actions: fc.constantFrom(...ACTS),
      uj: fc.integer({ min: 0, max: 6_000_000 }).map(String),
      calls: fc.integer({ min: 0, max: 120 }),
      exp_ms: fc.integer({ min: -2, max: 26 }).map((h) => NOW + h * HOUR),
      depth: fc.integer({ min: 0, max: 6 }),
    },
    { requiredKeys: [] },
  )
  .filter((s) => Object.keys(s).length > 0);

const step = fc.record({
  set: amendment,
  spend: fc.integer({ min: 0, max: 400_000 }),
  calls: fc.integer({ min: 0, max: 3 }),
});

test("the grant in force is inside every earlier one; acceptance matches the rule", () => {
  fc.assert(
    fc.property(fc.array(step, { minLength: 1, maxLength: 10 }), (steps) => {
      const log = new CheckpointLog([rootGrant()]);
      const history: EffectiveGrant[] = [log.effective];
      let spent = { uj: 0n, calls: 0, wall_ms: 0 };
      steps.forEach((s, i) => {
        spent = { uj: spent.uj + BigInt(s.spend), calls: spent.calls + s.calls, wall_ms: 0 };
        log.checkpoint(alice, { state: addressOf({ i }), spent, at_ms: NOW + 2 * i });
        const cur = log.effective;
        const next = applyAmendment(cur, s.set);
        const b = next.budget;
        const expectOk =
          isInside(next, cur, "tighten") && b.uj >= spent.uj && (b.calls === null || b.calls >= spent.calls);
        let ok = true;
        try {
          log.amend(root, s.set, NOW + 2 * i + 1);
        } catch (e) {
          if (typeof (e as { code?: unknown }).code !== "string") throw e;
          ok = false;
        }
        assert.equal(ok, expectOk, JSON.stringify(s.set));
        history.push(log.effective);
        for (const earlier of history) assert.ok(isInside(log.effective, earlier, "tighten"));
      });
    }),
    { numRuns: 150, seed: 7 },
  );
});
