// §4.1 grant sets: grants_id is the address of the sorted set of grant addresses.
import assert from "node:assert/strict";
import { test } from "node:test";
import { addressOf } from "@sbx/wire";
import { checkGrantSetDoc, grantsId, grantSetDoc, GRANT_SET_TYPE } from "../../src/index.ts";
import { codeOf } from "./fixtures.ts";

const a = addressOf({ g: 1 });
const b = addressOf({ g: 2 });

test("grants_id is order-independent and equals the address of the sorted document", () => {
  assert.equal(grantsId([a, b]), grantsId([b, a]));
  assert.equal(grantsId([a, b]), addressOf({ type: GRANT_SET_TYPE, grants: [a, b].sort() }));
  assert.notEqual(grantsId([a]), grantsId([a, b]));
  assert.equal(checkGrantSetDoc(grantSetDoc([b, a])), grantsId([a, b]));
});

test("refusals", () => {
  assert.equal(
    codeOf(() => grantsId([a, a])),
    "BadGrantSet",
  );
  assert.equal(
    codeOf(() => grantsId(["sha256:00"])),
    "BadGrantSet",
  );
  assert.equal(
    codeOf(() => checkGrantSetDoc({ type: GRANT_SET_TYPE, grants: [a, b].sort().reverse() })),
    "BadGrantSet",
  );
  assert.equal(
    codeOf(() => checkGrantSetDoc({ type: "x", grants: [] })),
    "BadGrantSet",
  );
  assert.equal(
    codeOf(() => checkGrantSetDoc({ type: GRANT_SET_TYPE, grants: [], extra: 1 })),
    "BadGrantSet",
  );
});
