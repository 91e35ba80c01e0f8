// The CLI's file layer: bounded strict JSON reads (codes, not messages), outputs that replace a file
// whole or leave nothing, and a streamed digest equal to the one-shot one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { randomFillSync } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blake3, formatDigest } from "@sbx/wire";
import { hashInput, readJsonInput, writeOutput } from "@sbx/host/files";
import { isHostError } from "@sbx/host";

function code(f: () => unknown): string | null {
  try {
    f();
    return null;
  } catch (e) {
    assert.ok(isHostError(e), `a HostError, got ${String(e)}`);
    return e.code;
  }
}

test("readJsonInput: the strict parser's codes, the size limit, and the path in the message", () => {
  const d = mkdtempSync(join(tmpdir(), "cli-files-"));
  try {
    const f = join(d, "x.json");
    const cases: [string, string | null][] = [
      ['{"a": 1}', null],
      ['{"a": 1, "a": 2}', "DuplicateKey"],
      ['{"__proto__": {}}', "ForbiddenKey"],
      ["[1.5]", "UnsafeNumber"],
      ["[1] trailing", "InvalidJson"],
      ["[" + "[".repeat(64) + "]".repeat(64) + "]", "TooDeep"],
    ];
    cases.forEach(([text, want], i) => {
      writeFileSync(f, text);
      assert.equal(
        code(() => readJsonInput(f, "test file")),
        want,
        `case ${i}`,
      );
    });
    writeFileSync(f, "[" + "0,".repeat(600) + "0]");
    assert.equal(
      code(() => readJsonInput(f, "test file", 1024)),
      "OversizeInput",
    );
    try {
      readJsonInput(f, "test file", 1024);
    } catch (e) {
      assert.match((e as Error).message, new RegExp(`test file ${f} is 1203 bytes; the limit is 1024 bytes`));
    }
    assert.equal(
      code(() => readJsonInput(d, "test file")),
      "NotAFile",
    );
    assert.equal(
      code(() => readJsonInput(join(d, "none"), "test file")),
      "Unreadable",
    );
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("writeOutput replaces a file whole; a refused exclusive write leaves the old file and no temporary", () => {
  const d = mkdtempSync(join(tmpdir(), "cli-files-"));
  try {
    const f = join(d, "out.txt");
    writeOutput(f, "one\n");
    writeOutput(f, "two\n");
    assert.equal(readFileSync(f, "utf8"), "two\n");
    assert.equal(
      code(() => {
        writeOutput(f, "three\n", { exclusive: true });
      }),
      "OutputExists",
    );
    assert.equal(readFileSync(f, "utf8"), "two\n");
    assert.deepEqual(readdirSync(d), ["out.txt"]);
    assert.equal(
      code(() => {
        writeOutput(d, "x");
      }),
      "NotAFile",
    );
    assert.equal(
      code(() => {
        writeOutput(join(d, "no", "x"), "x");
      }),
      "Unwritable",
    );
    assert.deepEqual(readdirSync(d), ["out.txt"]);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("hashInput streams a file and gives the one-shot digest", () => {
  const d = mkdtempSync(join(tmpdir(), "cli-files-"));
  try {
    for (const size of [0, 1, (1 << 20) - 1, 1 << 20, 3 * (1 << 20) + 17]) {
      const bytes = randomFillSync(new Uint8Array(size));
      const f = join(d, `s${size}`);
      writeFileSync(f, bytes);
      assert.equal(hashInput(f, "state file"), formatDigest(blake3(bytes)), `size ${size}`);
    }
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
