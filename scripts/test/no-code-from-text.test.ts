// scripts/lint/no-code-from-text.mjs (the ESLint rule `sbx/no-code-from-text` of `npm run lint`):
// it fires on every way the tree recovered an error code from text before codes crossed as values
// (the strips of a leading `Code: `, the parse of a code out of an error line), stays quiet on
// patterns of another shape, and is an error under the project's own eslint.config.js.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ESLint, Linter } from "eslint";
import tseslint from "typescript-eslint";
import { plugin } from "../lint/no-code-from-text.mjs";

const ROOT = new URL("../..", import.meta.url).pathname;

const config: Linter.Config[] = [
  {
    files: ["**/*.ts"],
    languageOptions: { parser: tseslint.parser },
    plugins: { sbx: plugin },
    rules: { "sbx/no-code-from-text": "error" },
  },
];

/** reports: the rule's message ids for `code`, in order. */
function reports(code: string): string[] {
  return new Linter({ configType: "flat" })
    .verify(code, config, { filename: "x.ts" })
    .map((m) => (m.ruleId === "sbx/no-code-from-text" ? (m.messageId ?? "?") : `fatal: ${m.message}`));
}

test("fires on each recovery of a code from text the tree held (issue 30 defect 6)", () => {
  const fired: [string, string[]][] = [
    // sandbox-attest runrecord/record.ts and wire.ts, cli sbx/verify.ts: a leading "Code: " stripped
    ['const s = `segment ${i}: ${e.message.replace(/^\\w+: /, "")}`;', ["cut", "regex"]],
    ['const s = r.error?.message.replace(/^\\w+: /, "");', ["cut", "regex"]],
    // cli report/page/svg.ts: the same over a message string
    ['const s = message.replace(/^[A-Z]\\w*: /, "");', ["regex"]],
    // cli files.ts and lifecycle/control.ts: the strip by startsWith and slice
    [
      "const d = e.message.startsWith(`${e.code}: `) ? e.message.slice(e.code.length + 2) : e.message;",
      ["cut", "cut"],
    ],
    // cli test/report/fleet-suite.ts: a code parsed out of an error line
    [
      "const m = /^sbx [a-z ]+: (?:[A-Za-z]+: .*?)?([A-Z][A-Za-z]+):/.exec(r.err) ?? /: ([A-Z][A-Za-z]+):/.exec(r.err);",
      ["regex", "regex"],
    ],
    // and the other spellings of the same thing
    ['const re = new RegExp("^(\\\\w+): ");', ["regex"]],
    ["const re = RegExp(`^([A-Z][A-Za-z0-9]{0,63}):\\\\s`);", ["regex"]],
    ["const m = CODE.exec(e.message);", ["exec"]],
    ['const [code] = err.message.split(": ");', ["cut"]],
    ["const c = (e as Error).message.match(/[A-Z]\\w+/)?.[0];", ["cut"]],
  ];
  for (const [i, [code, want]] of fired.entries())
    assert.deepEqual(reports(code), want, `case ${String(i)}: ${code}`);
});

test("stays quiet on patterns of another shape and on reading codes as values", () => {
  const quiet = [
    "const scheme = /^(\\w+):\\/\\//.exec(url);",
    "const ok = /^[A-Z][A-Za-z0-9]+$/.test(code);",
    "const line = /^[a-z]+: /.test(s);",
    "const m = /idle by provenance: measured \\d+/;",
    'if (isCodedError(e, "Expired")) throw e;',
    "const j = errorToJson(e); const back = errorFromJson(j);",
    'assert.ok(e.message.includes("the grant"));',
    'const parts = header.split(": ");',
  ];
  for (const [i, code] of quiet.entries()) assert.deepEqual(reports(code), [], `case ${String(i)}: ${code}`);
});

test("the project's eslint.config.js makes it an error in every package's source and tests", async () => {
  const eslint = new ESLint({ cwd: ROOT });
  for (const file of [
    "packages/wire/src/errors.ts",
    "packages/cli/test/control.test.ts",
    "scripts/layers.mjs",
  ]) {
    const c = (await eslint.calculateConfigForFile(file)) as { rules?: Record<string, unknown> };
    assert.deepEqual(c.rules?.["sbx/no-code-from-text"], [2], file);
  }
  const [r] = await eslint.lintText('export const bare = (m) => m.replace(/^[A-Z]\\w*: /, "");\n', {
    filePath: `${ROOT}scripts/probe.mjs`,
  });
  assert.deepEqual(
    r?.messages.map((m) => m.ruleId),
    ["sbx/no-code-from-text"],
  );
});
