// C12: scope containment (jcp §4.2). The pattern rule on a fixed table (prefix confusion, `*`, `/**`),
// scope inclusion, and children that widen their scope refused in a signed chain.
import type { Json } from "@sbx/wire";
import { errCase, okCase } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
import {
  ALICE,
  BOB,
  childPayload,
  expected,
  ROOT,
  rootPayload,
  sign,
  verifyInput,
} from "./grants/fixtures.ts";
import { patternCoversOp, scopeCoversOp } from "./grants/ops.ts";

const C = "C12" as const;

// [parent, child, covers]: every answer is stated here, not computed.
const TABLE: [string, string, boolean][] = [
  ["/a", "/a", true],
  ["/a", "/ab", false],
  ["/a", "/a/b", false],
  ["/a/**", "/a", true],
  ["/a/**", "/a/b/c", true],
  ["/a/**", "/ab", false],
  ["/a/**", "/ab/**", false],
  ["/a/**", "/a/**", true],
  ["/a", "/a/**", false],
  ["/**", "/anything/at/all", true],
  ["/x/**", "/**", false],
  ["/a/*", "/a/b", true],
  ["/a/*", "/a", false],
  ["/a/*", "/a/b/c", false],
  ["/a/*", "/a/*", true],
  ["/a/b", "/a/*", false],
  ["/a/*/c", "/a/zz/c", true],
  ["/a/*/**", "/a/b/**", true],
  ["/a/*/**", "/a/**", false],
  ["/a/*/**", "/a", false],
  ["/fs/work/**", "/fs/work/src/main.ts", true],
  ["/fs/work/**", "/fs/workspace/**", false],
  ["/net/api.example.com/**", "/net/api.example.com.evil/**", false],
  ["/A/**", "/a", false],
];

function patternVectors(): Vector[] {
  const out = TABLE.map(([p, c, yes], n) =>
    okCase(
      C,
      `c12-pattern-${n}`,
      `${p} ${yes ? "covers" : "does not cover"} ${c}`,
      "pattern.covers",
      { parent: p, child: c },
      { covers: yes },
    ),
  );
  const bad = [
    "",
    "a",
    "/",
    "/a/",
    "//a",
    "/a/./b",
    "/a/../b",
    "/**/a",
    "/a/**/**",
    "/a/b*",
    "/a b",
    "/é",
    "/a%41",
    "/" + "s/".repeat(32) + "s",
  ];
  bad.forEach((p, n) =>
    out.push(
      errCase(
        C,
        `c12-pattern-bad-${n}`,
        `malformed pattern ${JSON.stringify(p.slice(0, 30))}`,
        "pattern.covers",
        { parent: "/**", child: p },
        "BadPattern",
      ),
    ),
  );
  return out;
}

function scopeVectors(): Vector[] {
  const parent = { resources: ["/fs/work/**", "/net/api.example.com/**"], actions: ["read", "write"] };
  const cases: [string, Json, boolean][] = [
    ["same", parent, true],
    ["narrower-both", { resources: ["/fs/work/src/**"], actions: ["read"] }, true],
    [
      "each-resource-covered-by-some-parent",
      { resources: ["/fs/work/a", "/net/api.example.com/v1/**"], actions: ["write"] },
      true,
    ],
    ["extra-action", { resources: ["/fs/work/**"], actions: ["exec", "read"] }, false],
    ["one-resource-outside", { resources: ["/fs/work/**", "/fs/home/**"], actions: ["read"] }, false],
    ["prefix-not-path", { resources: ["/fs/workx/**"], actions: ["read"] }, false],
  ];
  return cases.map(([id, child, yes]) =>
    okCase(
      C,
      `c12-scope-${id}`,
      `scope inclusion: ${id}`,
      "scope.covers",
      { parent, child },
      { covers: yes },
    ),
  );
}

function chainVectors(): Vector[] {
  const r = sign(rootPayload(), ROOT);
  const child = (label: string, scope: Json) => [
    r,
    sign(childPayload(r, ALICE, BOB, label, { scope }), ALICE),
  ];
  const ok = child("scope-ok", { resources: ["/fs/work/src/**"], actions: ["read"] });
  const widen: [string, Json][] = [
    ["sibling-prefix", { resources: ["/fs/workspace/**"] }],
    ["up-a-level", { resources: ["/fs/**"] }],
    ["extra-action", { actions: ["exec", "read"] }],
    ["wildcard-over-literal", { resources: ["/fs/*/**"] }],
    ["host-suffix", { resources: ["/net/api.example.com.evil/**"] }],
  ];
  return [
    okCase(
      C,
      "c12-chain-narrower",
      "a child with a narrower scope verifies",
      "chain.verify",
      verifyInput(ok),
      expected(ok),
    ),
    ...widen.map(([id, s]) =>
      errCase(
        C,
        `c12-chain-${id}`,
        `a child widening its scope (${id}) is refused`,
        "chain.verify",
        verifyInput(child(id, s)),
        "ScopeWidens",
      ),
    ),
  ];
}

export const klass: ConformanceClass = {
  id: C,
  title: "scope containment",
  file: "grants.json",
  ops: { "pattern.covers": patternCoversOp, "scope.covers": scopeCoversOp },
  generate: () => [...patternVectors(), ...scopeVectors(), ...chainVectors()],
};
