// §2.1 The strict parser and canonicalize, edge by edge: every escape, every whitespace character,
// every kind of syntax error, the limits exactly at and one past their bounds. Each case states its
// answer (a value compared with JSON.parse's, or a code), so a rule removed or loosened fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { canonicalize, canonicalBytes, parseCanonical, parseStrict, utf8, WireError } from "@sbx/wire";

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof WireError, `threw ${String(e)}`);
    return e.code;
  }
  return "ok";
}

/** plain copies a parsed value into ordinary objects, so it compares with JSON.parse's. */
function plain(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v)) as unknown;
}

test("accepted text parses to what JSON.parse reads", () => {
  const texts = [
    String.raw`"\"\\\/\b\f\n\r\t\u00e9\u0041\uD83D\uDE00 x"`,
    ' \t\n\r{ \t\n\r"a" \t\n\r: \t\n\r[ \t\n\r1 \t\n\r, \t\n\r2 \t\n\r] \t\n\r, "b":{ } } \t\n\r',
    "[[],{},[ ],{ },[[]],[{}]]",
    '{"k":[true,false,null,"s",-1,0,9007199254740991,-9007199254740991]}',
    '"\u0020~\u007f\u0080"',
    '"abc\\ndef"',
    String.raw`"\uABCD\uabcd"`,
    '{"a":{"b":{"c":[1,{"d":2}]}},"e":3}',
  ];
  texts.forEach((t, i) => {
    assert.deepEqual(plain(parseStrict(t)), JSON.parse(t), `case ${i}`);
    assert.deepEqual(plain(parseStrict(utf8(t))), JSON.parse(t), `case ${i} as bytes`);
  });
});

test("refused text carries its code", () => {
  const cases: [string, string][] = [
    ["\v1", "InvalidJson"],
    ["\f1", "InvalidJson"],
    ["\u00a01", "InvalidJson"],
    ["1\v", "InvalidJson"],
    ['"\\x"', "InvalidJson"],
    ['"\\u12G4"', "InvalidJson"],
    ['"\\u123"', "InvalidJson"],
    ['"\\', "InvalidJson"],
    ['"abc', "InvalidJson"],
    ['"', "InvalidJson"],
    ['"\u001f"', "InvalidJson"],
    ['"\n"', "InvalidJson"],
    ["tru", "InvalidJson"],
    ["nul", "InvalidJson"],
    ["fals", "InvalidJson"],
    ["True", "InvalidJson"],
    ["1 2", "InvalidJson"],
    ["[1 2]", "InvalidJson"],
    ['{"a":1,}', "InvalidJson"],
    ['{"a" 1}', "InvalidJson"],
    ['{"a":1 "b":2}', "InvalidJson"],
    ["{1:2}", "InvalidJson"],
    ["{,}", "InvalidJson"],
    ["[,1]", "InvalidJson"],
    ["[1}", "InvalidJson"],
    ['{"a":1]', "InvalidJson"],
    ["[", "InvalidJson"],
    ['{"a":', "InvalidJson"],
    ["01", "InvalidJson"],
    ["-", "InvalidJson"],
    ["+1", "InvalidJson"],
    [".5", "InvalidJson"],
    ["x", "InvalidJson"],
    // Each of these would parse if one separator or literal check were missing.
    ["[1 23]", "InvalidJson"],
    ['{"a":1x"b":2}', "InvalidJson"],
    ['{a":1}', "InvalidJson"],
    ["[trux]", "InvalidJson"],
    ["[nulL]", "InvalidJson"],
    ["[fals3]", "InvalidJson"],
    ["1.0", "UnsafeNumber"],
    ["1e0", "UnsafeNumber"],
    ["1E+2", "UnsafeNumber"],
    ["1e-400", "UnsafeNumber"],
    ["-9007199254740992", "UnsafeNumber"],
    ["12345678901234567", "UnsafeNumber"],
    ['"\\ud800"', "LoneSurrogate"],
    ['"\\ude00\\ud83d"', "LoneSurrogate"],
    ['{"a":1,"b":2,"a":3}', "DuplicateKey"],
    ['{"a":{"__proto__":1}}', "ForbiddenKey"],
  ];
  cases.forEach(([text, want], i) => {
    assert.equal(
      code(() => parseStrict(text)),
      want,
      `case ${i}: ${JSON.stringify(text)}`,
    );
  });
});

test("numbers: -0 reads as +0 in integer mode; doubles mode reads fractions and refuses overflow", () => {
  assert.ok(Object.is(parseStrict("-0"), 0));
  assert.ok(Object.is((parseStrict("[-0]") as number[])[0], 0));
  assert.equal(parseStrict("1.5e1", { numbers: "doubles" }), 15);
  assert.equal(parseStrict("-0.25", { numbers: "doubles" }), -0.25);
  assert.equal(
    code(() => parseStrict("1e400", { numbers: "doubles" })),
    "UnsafeNumber",
  );
  assert.equal(
    code(() => parseStrict("-1e400", { numbers: "doubles" })),
    "UnsafeNumber",
  );
  assert.equal(parseStrict("9007199254740993", { numbers: "doubles" }), 9007199254740992);
});

test("depth: exactly maxDepth is accepted, one more is TooDeep; an empty container counts", () => {
  assert.equal(
    code(() => parseStrict("1", { maxDepth: 0 })),
    "ok",
  );
  assert.equal(
    code(() => parseStrict("[]", { maxDepth: 0 })),
    "TooDeep",
  );
  assert.equal(
    code(() => parseStrict("{}", { maxDepth: 0 })),
    "TooDeep",
  );
  assert.equal(
    code(() => parseStrict("[]", { maxDepth: 1 })),
    "ok",
  );
  assert.equal(
    code(() => parseStrict("[1,2]", { maxDepth: 1 })),
    "ok",
  );
  assert.equal(
    code(() => parseStrict('[{"a":1}]', { maxDepth: 1 })),
    "TooDeep",
  );
  assert.equal(
    code(() => parseStrict("[[]]", { maxDepth: 1 })),
    "TooDeep",
  );
  assert.equal(
    code(() => parseStrict('{"a":[],"b":[]}', { maxDepth: 2 })),
    "ok",
  );
  assert.equal(
    code(() => parseStrict("[".repeat(64) + "]".repeat(64))),
    "ok",
  );
  assert.equal(
    code(() => parseStrict("[".repeat(65) + "]".repeat(65))),
    "TooDeep",
  );
  assert.throws(() => parseStrict("1", { maxDepth: -1 }), RangeError);
  assert.throws(() => parseStrict("1", { maxDepth: Number.NaN }), RangeError);
});

test("size: exactly maxBytes is accepted, one more is OversizeInput, for text and for bytes", () => {
  assert.equal(
    code(() => parseStrict("[1]", { maxBytes: 3 })),
    "ok",
  );
  assert.equal(
    code(() => parseStrict("[1]", { maxBytes: 2 })),
    "OversizeInput",
  );
  assert.equal(
    code(() => parseStrict(utf8("[1]"), { maxBytes: 3 })),
    "ok",
  );
  assert.equal(
    code(() => parseStrict(utf8("[1]"), { maxBytes: 2 })),
    "OversizeInput",
  );
  // Bytes are counted, not characters: "é" is two bytes.
  assert.equal(
    code(() => parseStrict(utf8('"é"'), { maxBytes: 3 })),
    "OversizeInput",
  );
  const big = `"${"x".repeat(16 * 1024 * 1024 - 1)}"`;
  assert.equal(
    code(() => parseStrict(big)),
    "OversizeInput",
  );
  assert.equal(
    code(() => parseStrict(utf8(big))),
    "OversizeInput",
  );
  assert.equal(
    code(() => parseStrict(big.slice(1))),
    "InvalidJson",
  );
});

test("parseCanonical: canonical bytes pass, any other spelling is NotCanonical; its limits reach the parser", () => {
  assert.deepEqual(plain(parseCanonical(utf8('{"a":1,"b":[]}'))), { a: 1, b: [] });
  for (const t of ['{"b":[],"a":1}', "{ }", '{"a":1} ', '"\\u0041"']) {
    assert.equal(
      code(() => parseCanonical(utf8(t))),
      "NotCanonical",
      t,
    );
  }
  assert.equal(parseCanonical(utf8("1.5"), { numbers: "doubles" }), 1.5);
  assert.equal(
    code(() => parseCanonical(utf8("[[1]]"), { maxDepth: 1 })),
    "TooDeep",
  );
});

test("canonicalize refuses, by code or TypeError, exactly what canonical JSON cannot carry", () => {
  const deep = (n: number): unknown => (n === 0 ? 1 : [deep(n - 1)]);
  assert.equal(
    code(() => canonicalize(deep(64))),
    "ok",
  );
  assert.equal(
    code(() => canonicalize(deep(65))),
    "TooDeep",
  );
  assert.equal(
    code(() => canonicalize({ a: deep(64) })),
    "TooDeep",
  );
  assert.equal(
    code(() => canonicalize(Number.NaN)),
    "UnsafeNumber",
  );
  assert.equal(
    code(() => canonicalize(Infinity, "doubles")),
    "UnsafeNumber",
  );
  assert.equal(
    code(() => canonicalize(0.5)),
    "UnsafeNumber",
  );
  assert.equal(canonicalize(0.5, "doubles"), "0.5");
  assert.equal(
    code(() => canonicalize([2 ** 53])),
    "UnsafeNumber",
  );
  assert.equal(canonicalize([2 ** 53 - 1, true, false, null]), "[9007199254740991,true,false,null]");
  assert.equal(
    code(() => canonicalize({ s: "\ud800" })),
    "LoneSurrogate",
  );
  assert.equal(
    code(() => canonicalize({ "\udc00": 1 })),
    "LoneSurrogate",
  );
  assert.equal(
    code(() => canonicalize(JSON.parse('{"__proto__":1}'))),
    "ForbiddenKey",
  );
  assert.equal(
    code(() => canonicalize({ a: { prototype: 1 } })),
    "ForbiddenKey",
  );
  assert.throws(() => canonicalize({ a: undefined }), TypeError);
  assert.throws(() => canonicalize(undefined), TypeError);
  assert.throws(() => canonicalize(() => 1), TypeError);
  assert.throws(() => canonicalize(1n), TypeError);
  assert.throws(() => canonicalize([Symbol("s")]), TypeError);
  // A hole in an array is not JSON (an object walk would skip it).
  // eslint-disable-next-line no-sparse-arrays
  assert.throws(() => canonicalize([, 1]), TypeError);
  assert.equal(canonicalize({ b: [1, { d: "x", c: null }], a: "é" }), '{"a":"é","b":[1,{"c":null,"d":"x"}]}');
  assert.deepEqual(canonicalBytes({ a: "é" }), utf8('{"a":"é"}'));
});
