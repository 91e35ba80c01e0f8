import { test } from "node:test";
import assert from "node:assert/strict";
import { addressOf, canonicalize } from "@sbx/wire";
import { makeUnit, parseGrantsId, parseUnit, unitId, UNIT_TYPE } from "../../src/unit/index.ts";
import { isSandboxAttestError } from "../../src/errors.ts";

const manifest = addressOf({ manifest: "m" });
const base = { type: UNIT_TYPE, argv: ["python3", "-c", "print(1)"], manifest, level: "S4" };

function refused(v: unknown): void {
  assert.throws(
    () => parseUnit(v),
    (e) => isSandboxAttestError(e, "BadUnit"),
    canonicalize(v),
  );
}

test("unit_id is the address of the canonical descriptor, independent of member order", () => {
  const u = makeUnit({ argv: base.argv, manifest, level: "S4", labels: { team: "a" } });
  assert.equal(
    unitId(u),
    addressOf({ labels: { team: "a" }, level: "S4", manifest, argv: base.argv, type: UNIT_TYPE }),
  );
});

test("an entry instead of argv, and a workspace reference, are accepted", () => {
  const u = parseUnit({ type: UNIT_TYPE, entry: "tests", workspace: manifest, manifest, level: "S1" });
  assert.equal(u.entry, "tests");
  assert.notEqual(unitId(u), unitId(parseUnit(base)));
});

test("every malformed descriptor is refused with BadUnit", () => {
  refused(null);
  refused([]);
  refused({ ...base, type: "x" });
  refused({ ...base, extra: 1 });
  refused({ ...base, entry: "e" });
  refused({ type: UNIT_TYPE, manifest, level: "S4" });
  refused({ ...base, argv: [] });
  refused({ ...base, argv: ["a\0b"] });
  refused({ ...base, argv: [1] });
  refused({ ...base, argv: Array.from({ length: 257 }, () => "a") });
  refused({ ...base, manifest: "sha256:00" });
  refused({ ...base, level: "S8" });
  refused({ ...base, labels: { "Bad Key": "v" } });
  refused({ ...base, labels: { k: "" } });
  refused({ ...base, labels: [] });
  refused({ ...base, workspace: 5 });
});

test("grants_id must be a digest", () => {
  assert.equal(parseGrantsId(manifest), manifest);
  assert.throws(
    () => parseGrantsId("blake3:00"),
    (e) => isSandboxAttestError(e, "BadUnit"),
  );
});
