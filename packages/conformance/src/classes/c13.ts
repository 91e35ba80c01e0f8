// C13: budgets (jcp §4.3). Children at, under and over their parent's budget in each dimension;
// omitted limits inherit and never become unlimited.
import type { JsonObject } from "@sbx/wire";
import { errCase, okCase } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
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
  return out;
}

export const klass: ConformanceClass = {
  id: C,
  title: "budgets",
  file: "grants.json",
  ops: {},
  generate: vectors,
};
