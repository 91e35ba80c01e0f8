// §9 Honest levels: the level stated is computed from what the host set up; a caller can only
// lower it. Before, runUnit signed whatever level it was handed (S5 for a plain process).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { firstLink, stewardDomain } from "@sbx/sandbox-attest/audit";
import { LEVELS, makeUnit, unitId, type Level } from "@sbx/sandbox-attest/unit";
import { runUnit, type RunUnitOptions } from "../../src/run/index.ts";
import { providedLevel, statedLevel } from "../../src/sandbox/index.ts";

const none = addressOf({});
const base = { hostKey: testKey("host"), grantsId: none, manifest: none, policy: none };
// The unit descriptor runUnit builds by default (argv, manifest, the level asked): its address.
const idOf = (argv: string[], level: Level = "S0") => unitId(makeUnit({ argv, manifest: none, level }));
const stated = async (o: Partial<RunUnitOptions>) => {
  const r = await runUnit({ ...base, unitId: idOf(["true"], o.maxLevel), argv: ["true"], ...o });
  const level = verifyAttestation(r.attestation).predicate.level;
  assert.equal(level, r.level);
  return level;
};

test("providedLevel: the highest level whose guarantees and all below were provided", () => {
  const all = {
    isolated: true,
    metered: true,
    attested: true,
    journaled: true,
    snapshots: true,
    processControl: true,
    auditChain: true,
  };
  assert.equal(providedLevel(all), "S7");
  assert.equal(providedLevel({ ...all, isolated: false }), "S0", "nothing counts without isolation");
  assert.equal(
    providedLevel({ ...all, processControl: false }),
    "S5",
    "an audit link does not lift a level past a gap",
  );
  assert.equal(providedLevel({ ...all, snapshots: false }), "S4");
  for (const p of LEVELS)
    for (const c of LEVELS) {
      const s = statedLevel(p, c);
      assert.ok(LEVELS.indexOf(s) <= LEVELS.indexOf(p), `${p} capped at ${c} gave ${s}`);
      assert.equal(s, LEVELS.indexOf(c) < LEVELS.indexOf(p) ? c : p);
    }
});

test("a plain process states S0 whatever the caller asks for", async () => {
  for (const maxLevel of ["S1", "S5", "S7"] as Level[]) assert.equal(await stated({ maxLevel }), "S0");
  assert.equal(
    await stated({ audit: firstLink(stewardDomain(testKey("steward").did)), runHead: none }),
    "S0",
  );
});

test("a sandboxed run states S4, S5 when it continues a run record; --level lowers, never raises", async () => {
  const ws = mkdtempSync(join(tmpdir(), "sbx-level-"));
  try {
    const sandbox = { workspace: ws };
    assert.equal(await stated({ sandbox }), "S4");
    assert.equal(await stated({ sandbox, maxLevel: "S7" }), "S4");
    assert.equal(await stated({ sandbox, maxLevel: "S2" }), "S2");
    assert.equal(
      await stated({ sandbox, runHead: none, audit: firstLink(stewardDomain(testKey("steward").did)) }),
      "S5",
    );
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test("the library has no way to state a level as a free parameter", () => {
  // @ts-expect-error: runUnit takes no level to state (tsc checks this line), only maxLevel, a ceiling
  const o: RunUnitOptions = { ...base, unitId: idOf(["true"]), argv: ["true"], level: "S5" };
  assert.equal("maxLevel" in o, false);
});
