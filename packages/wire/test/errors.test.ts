// The coded error every package's error class derives from (errors.ts): code, reason and detail kept
// apart, `message` led by the code, and the `{code, message, detail}` form an error crosses a process
// boundary in (errorToJson), rebuilt with the same code by errorFromJson, which refuses any other form.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  CodedError,
  errorFromJson,
  errorToJson,
  isCodedError,
  isWireError,
  WireError,
} from "../src/index.ts";

test("a coded error keeps its code, reason and detail apart; its message leads with the code", () => {
  const e = new CodedError("RunBusy", "another sbx holds the run", { detail: { pid: 7 } });
  assert.equal(e.code, "RunBusy");
  assert.equal(e.reason, "another sbx holds the run");
  assert.equal(e.message, "RunBusy: another sbx holds the run");
  assert.deepEqual(e.detail, { pid: 7 });
  assert.deepEqual(new CodedError("X", "y").detail, {});
  const cause = new Error("below");
  assert.equal(new CodedError("X", "y", { cause }).cause, cause);
});

test("WireError is a CodedError with its own name and guard", () => {
  const e = new WireError("BadSignature", "the signature does not verify");
  assert.ok(e instanceof CodedError);
  assert.ok(isCodedError(e, "BadSignature"));
  assert.equal(isCodedError(e, "BadKey"), false);
  assert.ok(isWireError(e, "BadSignature"));
  assert.equal(e.name, "WireError");
  assert.equal(e.message, "BadSignature: the signature does not verify");
  assert.ok(!isCodedError(Object.assign(new Error("BadSignature: x"), { code: "BadSignature" })));
});

test("errorToJson / errorFromJson: the same code, reason and detail after a JSON round trip", () => {
  const cases = [
    new WireError("BadDigest", "not a digest"),
    new CodedError("Expired", "the grant expired at 5", {
      detail: { exp: 5, members: [{ pointer: "/a", code: "B" }] },
    }),
  ];
  for (const [i, e] of cases.entries()) {
    const j = errorToJson(e);
    assert.deepEqual(Object.keys(j).sort(), ["code", "detail", "message"], `case ${String(i)}`);
    assert.equal(j.message, e.reason, `case ${String(i)}: the message crosses without its code`);
    const back = errorFromJson(JSON.parse(JSON.stringify(j)));
    assert.ok(isCodedError(back, e.code), `case ${String(i)}`);
    assert.equal(back.reason, e.reason, `case ${String(i)}`);
    assert.equal(back.message, e.message, `case ${String(i)}`);
    assert.deepEqual(back.detail, e.detail, `case ${String(i)}`);
  }
});

test("errorFromJson refuses every other form with a TypeError naming what is wrong", () => {
  const good = { code: "Revoked", message: "m", detail: {} };
  const bad: [string, unknown, RegExp][] = [
    ["null", null, /not an object/],
    ["array", [good], /not an object/],
    ["string", "Revoked: m", /not an object/],
    ["missing detail", { code: "Revoked", message: "m" }, /members code, message/],
    ["extra member", { ...good, lib: "host" }, /members code, detail, lib, message/],
    ["code not a string", { ...good, code: 7 }, /code/],
    ["code not a code name", { ...good, code: "revoked" }, /code/],
    ["code with a colon", { ...good, code: "Revoked: x" }, /code/],
    ["empty code", { ...good, code: "" }, /code/],
    ["message not a string", { ...good, message: null }, /message/],
    ["detail an array", { ...good, detail: [] }, /detail/],
    ["detail null", { ...good, detail: null }, /detail/],
    ["class instance", Object.assign(new Map(), good), /not an object/],
  ];
  for (const [what, v, why] of bad)
    assert.throws(
      () => errorFromJson(v),
      (e: unknown) => e instanceof TypeError && why.test(e.message),
      what,
    );
});
