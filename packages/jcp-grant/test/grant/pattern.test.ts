// §4.2 resource patterns: fixed cases, and the fast containment rule checked against a literal
// reference (enumerate every concrete path over a small alphabet) on random patterns.
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { parsePattern, patternCovers, scopeAllows, scopeCovers } from "../../src/index.ts";
import { codeOf } from "./fixtures.ts";

const covers = (p: string, c: string) => patternCovers(parsePattern(p), parsePattern(c));

test("no prefix confusion: /a covers neither /ab nor /a/b", () => {
  assert.equal(covers("/a", "/ab"), false);
  assert.equal(covers("/a", "/a/b"), false);
  assert.equal(covers("/a/**", "/ab"), false);
  assert.equal(covers("/a/**", "/ab/**"), false);
  assert.equal(covers("/a", "/a"), true);
});

test("subtree covers itself and below; * covers exactly one segment", () => {
  const yes: [string, string][] = [
    ["/a/**", "/a"],
    ["/a/**", "/a/b/c"],
    ["/a/**", "/a/*/**"],
    ["/**", "/x/**"],
    ["/a/*", "/a/b"],
    ["/a/*/c", "/a/*/c"],
    ["/a/*/**", "/a/b/**"],
  ];
  const no: [string, string][] = [
    ["/a/*", "/a"],
    ["/a/*", "/a/b/c"],
    ["/a/b", "/a/*"],
    ["/a/*/**", "/a"],
    ["/a/*/**", "/a/**"],
    ["/a", "/a/**"],
    ["/x/**", "/**"],
  ];
  for (const [p, c] of yes) assert.equal(covers(p, c), true, `${p} ⊇ ${c}`);
  for (const [p, c] of no) assert.equal(covers(p, c), false, `${p} ⊉ ${c}`);
});

test("malformed patterns are refused with BadPattern", () => {
  for (const p of [
    "",
    "a/b",
    "/",
    "/a/",
    "//a",
    "/a/../b",
    "/./a",
    "/a/**/b",
    "/a/b*",
    "/a%2Fb",
    "/a b",
    "/" + "x".repeat(300),
    "/a".repeat(40),
  ])
    assert.equal(
      codeOf(() => parsePattern(p)),
      "BadPattern",
      JSON.stringify(p),
    );
});

test("scopeAllows and scopeCovers", () => {
  const s = { resources: ["/fs/work/**"], actions: ["read"] };
  assert.equal(scopeAllows(s, "read", "/fs/work/a.txt"), true);
  assert.equal(scopeAllows(s, "write", "/fs/work/a.txt"), false);
  assert.equal(scopeAllows(s, "read", "/fs/workx"), false);
  assert.equal(scopeCovers(s, { resources: ["/fs/work/src/**"], actions: ["read"] }), true);
  assert.equal(scopeCovers(s, { resources: ["/fs/work/src/**"], actions: ["read", "write"] }), false);
});

test("scopeAllows: one of several patterns is enough; a path with either wildcard is BadPattern", () => {
  const s = { resources: ["/fs/tmp/**", "/fs/work/**"], actions: ["read"] };
  assert.equal(scopeAllows(s, "read", "/fs/work/a.txt"), true);
  assert.equal(scopeAllows(s, "read", "/fs/tmp/b"), true);
  assert.equal(scopeAllows(s, "read", "/fs/etc/c"), false);
  assert.equal(
    codeOf(() => scopeAllows(s, "read", "/fs/work/*")),
    "BadPattern",
  );
  assert.equal(
    codeOf(() => scopeAllows(s, "read", "/fs/work/**")),
    "BadPattern",
  );
});

// Reference: the set of concrete paths (up to length 4, over {a, b, c}) a pattern matches.
const ALPHA = ["a", "b", "c"];
function allPaths(maxLen: number): string[][] {
  const out: string[][] = [[]];
  let frontier: string[][] = [[]];
  for (let n = 1; n <= maxLen; n++) {
    frontier = frontier.flatMap((p) => ALPHA.map((s) => [...p, s]));
    out.push(...frontier);
  }
  return out;
}
const PATHS = allPaths(4);
function refMatches(p: string, path: string[]): boolean {
  const parts = p.slice(1).split("/");
  const sub = parts[parts.length - 1] === "**";
  const segs = sub ? parts.slice(0, -1) : parts;
  if (sub ? path.length < segs.length : path.length !== segs.length) return false;
  return segs.every((s, i) => s === "*" || s === path[i]);
}
function refCovers(p: string, c: string): boolean {
  return PATHS.every((path) => !refMatches(c, path) || refMatches(p, path));
}

const arbPattern = fc
  .tuple(fc.array(fc.constantFrom("a", "b", "c", "*"), { minLength: 0, maxLength: 3 }), fc.boolean())
  .filter(([segs, sub]) => segs.length > 0 || sub)
  .map(([segs, sub]) => "/" + [...segs, ...(sub ? ["**"] : [])].join("/"));

test("patternCovers agrees with the literal reference on random patterns", () => {
  fc.assert(
    fc.property(arbPattern, arbPattern, (p, c) => {
      assert.equal(covers(p, c), refCovers(p, c), `${p} ⊇ ${c}`);
    }),
    { numRuns: 2000 },
  );
});
