// RFC 8785: the six published input/output pairs, and the strict parse side's refusals.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { canonicalize, parseCanonical, parseStrict, utf8, WireError, type Json } from "@sbx/wire";
import { externalDir } from "./shared.ts";

const names = readdirSync(join(externalDir, "jcs/input")).sort();

test("all six RFC 8785 pairs reproduce byte for byte", () => {
  assert.equal(names.length, 6);
  for (const n of names) {
    const input = readFileSync(join(externalDir, "jcs/input", n), "utf8");
    const want = readFileSync(join(externalDir, "jcs/output", n), "utf8");
    assert.equal(canonicalize(parseStrict(input, { numbers: "doubles" }), "doubles"), want, n);
    // The output is itself canonical.
    parseCanonical(utf8(want), { numbers: "doubles" });
  }
});

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof WireError, `threw ${String(e)}`);
    return e.code;
  }
  return "ok";
}

test("strict parse refusals carry stable codes", () => {
  const cases: [string, string][] = [
    ['{"a":1,"a":1}', "DuplicateKey"],
    ['{"__proto__":1}', "ForbiddenKey"],
    ['{"constructor":{}}', "ForbiddenKey"],
    ['[{"prototype":0}]', "ForbiddenKey"],
    ['"\\udfff"', "LoneSurrogate"],
    ["9007199254740992", "UnsafeNumber"],
    ["0.5", "UnsafeNumber"],
    ["1e999", "UnsafeNumber"],
    ["[1,]", "InvalidJson"],
    ["", "InvalidJson"],
    ['"\u0001"', "InvalidJson"],
    ["[".repeat(100) + "]".repeat(100), "TooDeep"],
  ];
  cases.forEach(([text, want], i) =>
    assert.equal(
      code(() => parseStrict(text)),
      want,
      `case ${i}: ${text.slice(0, 20)}`,
    ),
  );
  assert.equal(
    code(() => parseStrict(Uint8Array.from([0x22, 0xff, 0x22]))),
    "InvalidUtf8",
  );
  assert.equal(
    code(() => parseStrict("[1]", { maxBytes: 2 })),
    "OversizeInput",
  );
});

test("parsed objects have no prototype", () => {
  const v = parseStrict('{"a":{"b":1}}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(v), null);
  assert.equal(Object.getPrototypeOf(v.a), null);
});

test("canonicalize refuses values canonical JSON cannot carry", () => {
  assert.equal(
    code(() => canonicalize({ a: "\ud800" })),
    "LoneSurrogate",
  );
  assert.equal(
    code(() => canonicalize({ a: 2 ** 53 })),
    "UnsafeNumber",
  );
  assert.equal(
    code(() => canonicalize({ a: NaN })),
    "UnsafeNumber",
  );
  assert.equal(
    code(() => canonicalize(JSON.parse('{"__proto__":1}'))),
    "ForbiddenKey",
  );
  assert.throws(() => canonicalize({ a: undefined }), TypeError);
});

const jsonArb: fc.Arbitrary<Json> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.maxSafeInteger(),
    fc.string({ unit: "grapheme" }),
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(
      fc.string().filter((k) => !["__proto__", "constructor", "prototype"].includes(k)),
      tie("v"),
      { maxKeys: 4 },
    ),
  ),
})).v as fc.Arbitrary<Json>;

test("property: canonical bytes parse back strictly and canonically to the same value", () => {
  fc.assert(
    fc.property(jsonArb, (v) => {
      const text = canonicalize(v);
      assert.equal(canonicalize(parseCanonical(utf8(text))), text);
    }),
    { numRuns: 300 },
  );
});

test("property: the strict parser agrees with JSON.parse on what both accept", () => {
  fc.assert(
    fc.property(jsonArb, (v) => {
      const text = JSON.stringify(v, null, 1);
      assert.equal(canonicalize(parseStrict(text)), canonicalize(JSON.parse(text)));
    }),
    { numRuns: 300 },
  );
});

test("property: arbitrary text never crashes the strict parser, only coded refusals", () => {
  fc.assert(
    fc.property(fc.string(), (s) => {
      try {
        parseStrict(s);
      } catch (e) {
        assert.ok(e instanceof WireError);
      }
    }),
    { numRuns: 500 },
  );
});
