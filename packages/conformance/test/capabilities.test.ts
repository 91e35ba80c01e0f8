// The capabilities handshake (§11.2): an adapter declares what it implements; a malformed
// declaration is refused rather than narrowing the run; an adapter that knows no handshake claims all.
import { test } from "node:test";
import assert from "node:assert/strict";
import { inScope, readCapabilities } from "../src/adapter/capabilities.ts";
import { runClass } from "../src/run.ts";
import type { Adapter, ClassId, ConformanceClass } from "../src/types.ts";

test("an adapter that answers UnknownOp claims every class and the live cases", () => {
  const caps = readCapabilities({ ok: false, error: "UnknownOp" });
  assert.deepEqual(caps, { classes: "all", live: true });
  assert.equal(inScope(caps, "C8"), true);
});

test("a declared list puts exactly its classes in scope", () => {
  const caps = readCapabilities({ ok: true, output: { classes: ["C1", "C2"], live: false } });
  assert.equal(inScope(caps, "C1"), true);
  assert.equal(inScope(caps, "C2"), true);
  assert.equal(inScope(caps, "C8"), false);
  assert.equal(caps.live, false);
});

test("a malformed declaration or a failed handshake is refused", () => {
  for (const output of [
    null,
    { classes: ["C1"] },
    { classes: "some", live: true },
    { classes: ["x"], live: true },
  ])
    assert.throws(() => readCapabilities({ ok: true, output }), TypeError);
  assert.throws(() => readCapabilities({ ok: false, error: "Internal" }), TypeError);
});

test("runClass counts nothing for an undeclared class and never runs undeclared live cases", async () => {
  let calls = 0;
  const adapter: Adapter = {
    name: "fake",
    capabilities: () => Promise.resolve({ classes: ["C1"], live: false }),
    call: () => {
      calls++;
      return Promise.resolve({ ok: false, error: "UnknownOp" });
    },
    close: () => Promise.resolve(),
  };
  const caps = await adapter.capabilities();
  let liveRan = false;
  const klass = (id: ClassId): ConformanceClass => ({
    id,
    title: id,
    file: "core.json",
    generate: () => [],
    ops: {},
    live: () => {
      liveRan = true;
      return Promise.resolve([]);
    },
  });
  const out = await runClass(klass("C2"), adapter, { live: true, caps });
  assert.deepEqual([out.passed, out.failed, out.skipped, out.outOfScope], [0, 0, 0, ["class"]]);
  assert.equal(calls, 0);
  const c1 = await runClass(klass("C1"), adapter, { live: true, caps });
  assert.deepEqual(c1.outOfScope, ["live cases"]);
  assert.equal(liveRan, false);
  assert.ok(c1.failed > 0, "an in-scope class whose ops fail is failed, not skipped");
  assert.equal(c1.skipped, 0);
});
