// §14.2 Syntax-error positions in one pass: the fast pathsAt agrees with jsonc-parser's getLocation
// (the literal reference, one call per offset) on random JSONC, and a 320 KB input of repeated `/*`
// (tens of thousands of errors, minutes when each error re-scanned the text) is refused promptly.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { getLocation, parseTree, type ParseError } from "jsonc-parser";
import { pathsAt } from "../../src/manifest/locate.ts";
import { ingestManifest } from "../../src/manifest/ingest.ts";
import { isSandboxAttestError } from "../../src/errors.ts";

const TOKENS = [
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  '"k"',
  '"a b"',
  "1",
  "-2.5",
  "true",
  "null",
  " ",
  "\n",
  "/*c*/",
  "//x\n",
  "/*",
  "'",
  "x",
  '"',
];

test("pathsAt gives getLocation's path at every offset, in one pass", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }),
      fc.array(fc.nat(), { maxLength: 12 }),
      (toks, picks) => {
        const text = toks.join("");
        const errors: ParseError[] = [];
        parseTree(text, errors, { allowTrailingComma: true });
        const offsets = [...errors.map((e) => e.offset), ...picks.map((p) => p % (text.length + 1))];
        const fast = pathsAt(text, offsets);
        offsets.forEach((o, i) => {
          assert.deepEqual(fast[i], getLocation(text, o).path, `${JSON.stringify(text)} at ${o}`);
        });
      },
    ),
    { numRuns: 2000 },
  );
});

test(
  "320 KB of repeated /* is refused with ManifestParseError, every error located",
  { timeout: 30_000 },
  () => {
    const source = "/*".repeat(160 * 1024);
    assert.throws(
      () => ingestManifest(source),
      (e) => {
        assert.ok(isSandboxAttestError(e, "ManifestParseError"));
        const members = (e as { members?: readonly { offset?: number }[] }).members ?? [];
        assert.ok(members.length > 10_000 && members.every((m) => typeof m.offset === "number"));
        return true;
      },
    );
  },
);
