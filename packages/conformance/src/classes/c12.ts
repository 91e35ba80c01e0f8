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
  // §4.2 limits: at most 32 segments, a trailing `**` counted as one of them; at most 256 bytes.
  const limits: [string, string, string | boolean][] = [
    ["32-segments", "/" + "s/".repeat(31) + "s", true],
    ["31-segments-and-subtree", "/" + "s/".repeat(31) + "**", true],
    ["32-segments-and-subtree", "/" + "s/".repeat(32) + "**", "BadPattern"],
    ["256-bytes", "/" + "a".repeat(255), true],
    ["257-bytes", "/" + "a".repeat(256), "BadPattern"],
  ];
  for (const [id, p, want] of limits)
    out.push(
      typeof want === "boolean"
        ? okCase(
            C,
            `c12-pattern-limit-${id}`,
            `pattern limits: ${id}`,
            "pattern.covers",
            { parent: "/**", child: p },
            { covers: want },
          )
        : errCase(
            C,
            `c12-pattern-limit-${id}`,
            `pattern limits: ${id}`,
            "pattern.covers",
            { parent: "/**", child: p },
            want,
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
    ["one-resource-outside", { resources: ["/fs/home/**", "/fs/work/**"], actions: ["read"] }, false],
    ["prefix-not-path", { resources: ["/fs/workx/**"], actions: ["read"] }, false],
  ];
  const out = cases.map(([id, child, yes]) =>
    okCase(
      C,
      `c12-scope-${id}`,
      `scope inclusion: ${id}`,
      "scope.covers",
      { parent, child },
      { covers: yes },
    ),
  );
  // §4.2: scope.covers is defined on valid scopes only. Each scope is checked, parent first, as a
  // grant's scope is (resources, then actions), before any containment is computed.
  const invalid: [string, Json, Json, string][] = [
    [
      "child-unsorted",
      parent,
      { resources: ["/net/api.example.com/**", "/fs/work/**"], actions: ["read"] },
      "BadGrant",
    ],
    ["child-duplicate-action", parent, { resources: ["/fs/work/**"], actions: ["read", "read"] }, "BadGrant"],
    ["child-empty-actions", parent, { resources: ["/fs/work/**"], actions: [] }, "BadGrant"],
    [
      "parent-unsorted",
      { resources: ["/net/api.example.com/**", "/fs/work/**"], actions: ["read", "write"] },
      { resources: ["/fs/work/**"], actions: ["read"] },
      "BadGrant",
    ],
    ["parent-bad-pattern", { resources: ["/fs/work/"], actions: ["read"] }, parent, "BadPattern"],
    [
      "parent-before-child",
      { resources: ["/fs/work/**"], actions: ["write", "read"] },
      { resources: ["/fs/work/"], actions: ["read"] },
      "BadGrant",
    ],
  ];
  for (const [id, p, c, code] of invalid)
    out.push(
      errCase(
        C,
        `c12-scope-invalid-${id}`,
        `an invalid scope is refused: ${id}`,
        "scope.covers",
        { parent: p, child: c },
        code,
      ),
    );
  return out;
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
