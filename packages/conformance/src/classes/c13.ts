// C13: budgets (jcp §4.3). Children at, under and over their parent's budget in each dimension;
// omitted limits inherit and never become unlimited; an unlimited limit lies within no finite one
// ("Containment of limits", decided by budget.within), and null is never a signed limit.
import type { Json, JsonObject } from "@sbx/wire";
import { errCase, okCase } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
import { budgetWithinOp } from "./grants/ops.ts";
import {
  ALICE,
  BOB,
  CAROL,
  childPayload,
  expected,
  ROOT,
  rootPayload,
  sign,
  verifyInput,
} from "./grants/fixtures.ts";

const C = "C13" as const;

function chainWith(rootBudget: JsonObject, childBudget: JsonObject | null, label: string) {
  const r = sign(rootPayload({ budget: rootBudget }), ROOT);
  return [r, sign(childPayload(r, ALICE, BOB, label, childBudget ? { budget: childBudget } : {}), ALICE)];
}

function vectors(): Vector[] {
  const rb = { uj: "5000000", calls: 100, wall_ms: 60000 };
  const ok: [string, JsonObject, JsonObject | null, string][] = [
    ["equal", rb, rb, "a child may keep its parent's whole budget"],
    ["lower", rb, { uj: "1", calls: 0, wall_ms: 0 }, "a child below its parent in every dimension"],
    ["inherit-all", rb, null, "a child without a budget inherits the parent's"],
    ["inherit-limits", rb, { uj: "10" }, "calls and wall_ms left out are the parent's, not unlimited"],
    [
      "root-unlimited-calls",
      { uj: "5000000" },
      { uj: "10", calls: 1000000 },
      "a root without calls leaves calls unlimited",
    ],
    ["max-amount", { uj: "18446744073709551615" }, { uj: "18446744073709551615" }, "2^64 − 1 microjoules"],
  ];
  const bad: [string, JsonObject, JsonObject][] = [
    ["uj-one-over", rb, { uj: "5000001" }],
    ["uj-far-over", rb, { uj: "18446744073709551615" }],
    ["calls-over", rb, { calls: 101 }],
    ["wall-over", rb, { wall_ms: 60001 }],
  ];
  const out = ok.map(([id, r, c, d]) => {
    const chain = chainWith(r, c, `budget-${id}`);
    return okCase(C, `c13-${id}`, d, "chain.verify", verifyInput(chain), expected(chain));
  });
  for (const [id, r, c] of bad)
    out.push(
      errCase(
        C,
        `c13-${id}`,
        `child budget ${id} refused`,
        "chain.verify",
        verifyInput(chainWith(r, c, `budget-${id}`)),
        "BudgetExceeds",
      ),
    );
  // A grandchild is bounded by its parent's inherited budget, not just the root's.
  const [r, b] = chainWith(rb, { uj: "1000" }, "budget-mid");
  const g = sign(childPayload(b!, BOB, CAROL, "budget-grandchild", { budget: { uj: "1001" } }), BOB);
  out.push(
    errCase(
      C,
      "c13-grandchild-over-parent",
      "a grandchild over its parent (under the root) is refused",
      "chain.verify",
      verifyInput([r!, b!, g]),
      "BudgetExceeds",
    ),
  );
  return [...out, ...nullInSigned(), ...withinVectors(), ...withinRefusals()];
}

/** A child, grandchild position or root that writes null for a limit is malformed (§4.1, §4.3). */
function nullInSigned(): Vector[] {
  const rb = { uj: "5000000", calls: 100, wall_ms: 60000 };
  const cases: [string, JsonObject, JsonObject | null, string][] = [
    ["child-null-calls", rb, { calls: null }, "a child may not write calls: null to mean unlimited"],
    ["child-null-wall", rb, { wall_ms: null }, "a child may not write wall_ms: null to mean unlimited"],
    [
      "root-null-calls",
      { uj: "5000000", calls: null },
      null,
      "a root leaves calls out to leave it unlimited",
    ],
  ];
  return cases.map(([id, r, c, d]) =>
    errCase(C, `c13-${id}`, d, "chain.verify", verifyInput(chainWith(r, c, `budget-${id}`)), "BadGrant"),
  );
}

type Limits = [calls: number | null, wall_ms: number | null];
const budget = (uj: string, [calls, wall_ms]: Limits): Json => ({ uj, calls, wall_ms });

/**
 * budget.within over the cases of §4.3 "Containment of limits", each dimension on its own: a finite
 * parent bounds an unlimited child (outside), an unlimited parent bounds nothing (inside).
 */
function withinVectors(): Vector[] {
  const cases: [string, string, Limits, string, Limits, boolean, string][] = [
    ["equal", "10", [5, 60], "10", [5, 60], true, "equal budgets"],
    ["lower", "10", [5, 60], "9", [4, 59], true, "lower in every dimension"],
    ["both-unlimited", "10", [null, null], "10", [null, null], true, "unlimited under unlimited"],
    ["finite-under-unlimited", "10", [null, null], "10", [7, 9], true, "an unlimited parent bounds nothing"],
    ["zero-limits", "0", [0, 0], "0", [0, 0], true, "zero is a limit, not unlimited"],
    ["calls-unlimited-under-finite", "10", [5, 60], "10", [null, 60], false, "unlimited calls under 5"],
    ["wall-unlimited-under-finite", "10", [5, 60], "10", [5, null], false, "unlimited wall_ms under 60"],
    ["unlimited-under-zero", "10", [0, 0], "10", [null, null], false, "unlimited under zero limits"],
    ["calls-one-over", "10", [5, 60], "10", [6, 60], false, "calls one over"],
    ["wall-one-over", "10", [5, null], "10", [5, 61], true, "wall_ms over an unlimited parent's"],
    ["uj-one-over", "10", [null, null], "11", [null, null], false, "uj one over"],
  ];
  return cases.map(([id, pu, pl, cu, cl, within, d]) =>
    okCase(
      C,
      `c13-within-${id}`,
      d,
      "budget.within",
      { parent: budget(pu, pl), child: budget(cu, cl) },
      {
        within,
      },
    ),
  );
}

/** budget.within refuses budgets not in the effective form, parent first (`BadGrant`). */
function withinRefusals(): Vector[] {
  const ok = budget("10", [5, 60]);
  const cases: [string, Json, Json, string][] = [
    ["missing-limit", { uj: "10", calls: 5 }, ok, "an effective budget states all three members"],
    ["extra-member", { uj: "10", calls: 5, wall_ms: 6, bytes: 1 }, ok, "an unknown member"],
    ["string-limit", ok, { uj: "10", calls: "5", wall_ms: 60 }, "a limit written as a string"],
    ["negative-limit", ok, { uj: "10", calls: -1, wall_ms: 60 }, "a negative limit"],
    ["number-uj", ok, { uj: 10, calls: 5, wall_ms: 60 }, "uj as a JSON number"],
  ];
  return cases.map(([id, parent, child, d]) =>
    errCase(C, `c13-within-bad-${id}`, d, "budget.within", { parent, child }, "BadGrant"),
  );
}

export const klass: ConformanceClass = {
  id: C,
  title: "budgets",
  file: "grants.json",
  ops: { "budget.within": budgetWithinOp },
  generate: vectors,
};
