// The JCP oracle (src/oracle/jcp.ts) against the committed vectors and the implementation, and the
// generation check (src/generate/oracle.ts) that refuses any disagreement among the three.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { parsePattern, patternCovers } from "@sbx/jcp-grant/grant";
import { canonicalize, type Json } from "@sbx/wire";
import { jcpOracle } from "../src/oracle/jcp.ts";
import { checkOracles } from "../src/generate/oracle.ts";
import { vectorsDir } from "../src/paths.ts";
import type { Vector } from "../src/types.ts";

const grants = (JSON.parse(readFileSync(join(vectorsDir, "grants.json"), "utf8")) as { vectors: Vector[] })
  .vectors;

test("the oracle answers every C11–C19 vector as the vector states", () => {
  assert.ok(grants.length > 200, `only ${grants.length} vectors`);
  for (const [i, v] of grants.entries()) {
    const r = jcpOracle(v.op, v.input);
    assert.ok(r, `vector ${i} ${v.id}: no oracle for ${v.op}`);
    if (v.expect === "ok") {
      assert.ok(r.ok, `vector ${i} ${v.id}: oracle refuses ${r.ok ? "" : r.error}`);
      if (v.output !== undefined)
        assert.equal(canonicalize(r.output), canonicalize(v.output), `vector ${i} ${v.id}`);
    } else assert.deepEqual(r, { ok: false, error: v.expect.error }, `vector ${i} ${v.id}`);
  }
});

test("generation reports an implementation or a generator that disagrees with the oracle", async () => {
  const v = grants.find((x) => x.id === "c14-child-exp-later");
  assert.ok(v);
  const wrongImpl = { "chain.verify": () => ({ grants: [] }) as Json };
  assert.match(
    (await checkOracles([v], wrongImpl)).join("\n"),
    /c14-child-exp-later: .*implementation answers ok/,
  );
  const wrongCode: Vector = { ...v, expect: { error: "Expired" } };
  const thrower = {
    "chain.verify": () => {
      throw Object.assign(new Error("x"), { code: "WindowWidens" });
    },
  };
  assert.match(
    (await checkOracles([wrongCode], thrower)).join("\n"),
    /states error Expired, the oracle answers error WindowWidens/,
  );
  assert.deepEqual(await checkOracles([v], thrower), []);
});

// Patterns over a small alphabet, so that random pairs often cover each other.
const segment = fc.constantFrom("a", "b", "*");
const pattern = fc
  .tuple(fc.array(segment, { minLength: 0, maxLength: 4 }), fc.boolean())
  .filter(([s, sub]) => s.length > 0 || sub)
  .map(([s, sub]) => (s.length ? "/" + s.join("/") : "") + (sub ? "/**" : ""));

test("the oracle's pattern containment equals the implementation's on random patterns", () => {
  fc.assert(
    fc.property(pattern, pattern, (p, c) => {
      const o = jcpOracle("pattern.covers", { parent: p, child: c });
      assert.deepEqual(
        o,
        { ok: true, output: { covers: patternCovers(parsePattern(p), parsePattern(c)) } },
        `${p} ⊇ ${c}`,
      );
    }),
    { numRuns: 2000, seed: 21 },
  );
});
