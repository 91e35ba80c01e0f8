// Hash chains (§2.7) against a literal re-statement of the definition, 64-bit amounts (§2.2), and
// the hex helpers against their literal definitions.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  addAmounts,
  addressOf,
  blake3,
  canonicalBytes,
  chainGenesis,
  chainHeads,
  chainNext,
  compareAmounts,
  concatBytes,
  formatDigest,
  fromHex,
  isAmount,
  parseAmount,
  parseDigest,
  subAmounts,
  toHex,
  utf8,
  WireError,
  AMOUNT_MAX,
} from "@sbx/wire";

test("head₀ = BLAKE3(tag ‖ ids) and headₙ = BLAKE3(headₙ₋₁ ‖ JCS(entry)), literally", () => {
  const ids = [addressOf({ u: 1 }), addressOf({ g: 2 })];
  const h0 = formatDigest(
    blake3(concatBytes(utf8("sandbox.runrecord/1"), parseDigest(ids[0]), parseDigest(ids[1]))),
  );
  assert.equal(chainGenesis("sandbox.runrecord/1", ids), h0);
  const e = { kind: "executed", n: 1 };
  assert.equal(chainNext(h0, e), formatDigest(blake3(concatBytes(parseDigest(h0), canonicalBytes(e)))));
  assert.deepEqual(chainHeads("sandbox.runrecord/1", ids, [e]), [h0, chainNext(h0, e)]);
});

test("amounts: exact above 2^53, refusals by code", () => {
  assert.equal(addAmounts("9007199254740993", "9007199254740993"), "18014398509481986");
  assert.equal(subAmounts("10", "3"), "7");
  assert.equal(compareAmounts("10", "9"), 1);
  const code = (fn: () => unknown) => {
    try {
      fn();
      return "ok";
    } catch (e) {
      return (e as WireError).code;
    }
  };
  assert.equal(
    code(() => addAmounts(AMOUNT_MAX.toString(), "1")),
    "AmountOverflow",
  );
  assert.equal(
    code(() => subAmounts("1", "2")),
    "AmountUnderflow",
  );
  for (const bad of ["", "01", "+1", "1.0", "1e2", " 1", "-0"])
    assert.equal(
      code(() => parseAmount(bad)),
      "BadAmount",
      bad,
    );
});

test("property: addition of amounts matches bigint arithmetic or overflows", () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: AMOUNT_MAX }), fc.bigInt({ min: 0n, max: AMOUNT_MAX }), (a, b) => {
      if (a + b > AMOUNT_MAX)
        assert.throws(
          () => addAmounts(a.toString(), b.toString()),
          (e: unknown) => e instanceof WireError && e.code === "AmountOverflow",
        );
      else assert.equal(parseAmount(addAmounts(a.toString(), b.toString())), a + b);
    }),
  );
});

test("property: isAmount is the decimal form of 0..2^64 − 1, near the bound and anywhere", () => {
  const literal = (s: string): boolean => /^(0|[1-9][0-9]*)$/.test(s) && BigInt(s) <= AMOUNT_MAX;
  const near = fc.bigInt({ min: AMOUNT_MAX - 1000n, max: AMOUNT_MAX + 1000n }).map(String);
  const text = fc.stringMatching(/^[0-9]{0,22}$/);
  fc.assert(
    fc.property(fc.oneof(near, text, fc.bigInt({ min: 0n, max: 1n << 70n }).map(String)), (s) => {
      assert.equal(isAmount(s), literal(s), s);
    }),
    { numRuns: 3000 },
  );
  for (const [i, s] of [
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999",
    "09",
  ].entries())
    assert.equal(isAmount(s), literal(s), `case ${i} ${s}`);
});

test("property: toHex and fromHex are the literal hex encoding; fromHex refuses anything else", () => {
  const literalTo = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const literalFrom = (s: string): number[] | "RangeError" =>
    s.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(s)
      ? Array.from({ length: s.length / 2 }, (_, i) => parseInt(s.slice(2 * i, 2 * i + 2), 16))
      : "RangeError";
  const attempt = (s: string): number[] | "RangeError" => {
    try {
      return [...fromHex(s)];
    } catch (e) {
      assert.ok(e instanceof RangeError);
      return "RangeError";
    }
  };
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
      assert.equal(toHex(b), literalTo(b));
      assert.deepEqual([...fromHex(toHex(b))], [...b]);
      assert.deepEqual([...fromHex(toHex(b).toUpperCase())], [...b]);
    }),
  );
  const text = fc.oneof(fc.string({ maxLength: 12 }), fc.stringMatching(/^[0-9a-fA-Fg\u0100 ]{0,12}$/));
  fc.assert(
    fc.property(text, (s) => assert.deepEqual(attempt(s), literalFrom(s), JSON.stringify(s))),
    {
      numRuns: 3000,
    },
  );
});
