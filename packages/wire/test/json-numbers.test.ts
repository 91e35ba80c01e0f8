// §2.1 numbers by their text, and §2.9 depth without recursion: the strict parser checked against a
// literal restatement of each rule on generated input.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { canonicalize, parseCanonical, parseStrict, utf8, WireError, type Json } from "@sbx/wire";

const SAFE = 2n ** 53n - 1n;

/** The rule of §2.1 in integer mode, restated: the text is an integer, and in the safe range. */
function integerRule(text: string): number | "UnsafeNumber" {
  if (!/^-?(0|[1-9][0-9]*)$/.test(text)) return "UnsafeNumber";
  const b = BigInt(text);
  return b > SAFE || b < -SAFE ? "UnsafeNumber" : Number(b);
}

/** The rule in doubles mode, restated: any number whose value is finite. */
function doublesRule(text: string): number | "UnsafeNumber" {
  const n = Number(text);
  return Number.isFinite(n) ? n : "UnsafeNumber";
}

/** outcome parses and returns the value, or the WireError code. */
function outcome(text: string, opts: Parameters<typeof parseStrict>[1] = {}): Json | string {
  try {
    return parseStrict(text, opts);
  } catch (e) {
    assert.ok(e instanceof WireError, `threw ${String(e)}`);
    return e.code;
  }
}

const digits = (min: number, max: number) =>
  fc
    .array(fc.integer({ min: 0, max: 9 }).map(String), { minLength: min, maxLength: max })
    .map((a) => a.join(""));

/** RFC 8259 number texts: sign, integer part, optional fraction, optional exponent. */
const numberText = fc
  .tuple(
    fc.constantFrom("", "-"),
    fc.oneof(
      fc.constant("0"),
      fc.tuple(fc.integer({ min: 1, max: 9 }).map(String), digits(0, 24)).map(([a, b]) => a + b),
    ),
    fc.option(digits(1, 20).map((d) => "." + d)),
    fc.option(
      fc
        .tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), fc.oneof(digits(1, 3), digits(4, 9)))
        .map((p) => p.join("")),
    ),
  )
  .map(([s, i, f, e]) => s + i + (f ?? "") + (e ?? ""));

const ISSUE = [
  "123e-10000000",
  "1e-400",
  "1.0000000000000001",
  "9007199254740990.5",
  "1e0",
  "1E2",
  "1.0",
  "-0",
  "-0.0",
  "9007199254740991",
  "-9007199254740991",
  "9007199254740992",
  "-9007199254740992",
  "1" + "0".repeat(400),
];

test("integer mode: a number is accepted exactly when its text is a safe integer", () => {
  for (const t of ISSUE) {
    assert.equal(outcome(t), integerRule(t), t);
    const want = integerRule(t);
    const inObject = outcome(`{"n":${t}}`);
    if (typeof want === "string") assert.equal(inObject, want, t);
    else assert.equal(canonicalize(inObject), `{"n":${String(want)}}`, t);
  }
  fc.assert(
    fc.property(numberText, (t) => {
      const want = integerRule(t);
      assert.equal(outcome(t), want, t);
      const inArray = outcome(`[1, ${t}]`);
      assert.deepEqual(inArray, typeof want === "string" ? want : [1, want], t);
    }),
    { numRuns: 2000 },
  );
});

test("integer mode: -0 reads as 0", () => {
  assert.ok(Object.is(parseStrict("-0"), 0));
});

test("doubles mode: a number is accepted exactly when its value is finite", () => {
  fc.assert(
    fc.property(numberText, (t) => {
      assert.equal(outcome(t, { numbers: "doubles" }), doublesRule(t), t);
    }),
    { numRuns: 2000 },
  );
});

/** Protocol-shaped values: safe integers, well-formed strings, nested arrays and objects. */
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.maxSafeInteger(),
    fc.string({ unit: "grapheme" }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(
      fc
        .string({ unit: "grapheme", maxLength: 6 })
        .filter((k) => !["__proto__", "constructor", "prototype"].includes(k)),
      tie("value"),
      { maxKeys: 4 },
    ),
  ),
}));

test("the parser reads what JSON.parse reads, for protocol values in any layout", () => {
  fc.assert(
    fc.property(value, fc.constantFrom(undefined, 1, "\t", " \n "), (v, indent) => {
      const text = JSON.stringify(v, null, indent);
      assert.equal(canonicalize(parseStrict(text)), canonicalize(JSON.parse(text)));
    }),
    { numRuns: 500 },
  );
});

test("depth: TooDeep exactly past the caller's limit, whatever the limit (§2.9)", () => {
  const nest = (d: number, kind: number) =>
    kind === 0 ? "[".repeat(d) + "1" + "]".repeat(d) : '{"a":'.repeat(d) + "1" + "}".repeat(d);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 3000 }),
      fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 1e9 }), fc.constant(Infinity)),
      fc.integer({ min: 0, max: 1 }),
      (d, maxDepth, kind) => {
        const got = outcome(nest(d, kind), { maxDepth });
        if (d > maxDepth) assert.equal(got, "TooDeep");
        else assert.notEqual(typeof got, "string");
      },
    ),
    { numRuns: 300 },
  );
  // The case of the issue: a limit of a million on input 100,000 deep reads it, without RangeError.
  let v = parseStrict("[".repeat(100_000) + "]".repeat(100_000), { maxDepth: 1e6 });
  let depth = 0;
  for (; Array.isArray(v); v = v[0] as Json) depth++;
  assert.equal(depth, 100_000);
  assert.equal(outcome("[".repeat(100_000) + "]".repeat(100_000), { maxDepth: 99_999 }), "TooDeep");
  assert.equal(outcome("[".repeat(1_000_000), { maxDepth: Infinity }), "InvalidJson");
  // parseCanonical re-serialises, and the serialiser's own limit is 64: coded, never an overflow.
  const deep = utf8("[".repeat(100_000) + "]".repeat(100_000));
  assert.throws(
    () => parseCanonical(deep, { maxDepth: 1e6 }),
    (e: unknown) => e instanceof WireError && e.code === "TooDeep",
  );
  assert.throws(() => parseStrict("[]", { maxDepth: Number.NaN }), RangeError);
  assert.throws(() => parseStrict("[]", { maxDepth: -1 }), RangeError);
});
