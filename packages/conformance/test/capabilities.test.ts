// The capabilities handshake (§11.2): an adapter declares what it implements; a malformed
// declaration is refused rather than narrowing the run; an adapter that knows no handshake claims all.
import { test } from "node:test";
import assert from "node:assert/strict";
import { inScope, readCapabilities } from "../src/adapter/capabilities.ts";

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
