// scripts/layers.mjs (the layering check of `npm run lint`) against a small workspace written here:
// a clean one passes, and each way of breaking the layering is reported where it happens.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const SCRIPT = join(import.meta.dirname, "..", "layers.mjs");

type Files = Record<string, string>;

const pkg = (
  name: string,
  deps: Record<string, string>,
  exports: Record<string, string> = { ".": "./src/index.ts" },
) => JSON.stringify({ name, type: "module", exports, dependencies: deps });

/** A workspace that keeps every rule: wire at the bottom, jcp-grant on it, host above both. */
const CLEAN: Files = {
  "package.json": JSON.stringify({ name: "ws", private: true, devDependencies: { "fast-check": "4.10.2" } }),
  "packages/wire/package.json": pkg("@sbx/wire", { "hash-wasm": "4.13.0" }),
  "packages/wire/src/index.ts": 'import { createBLAKE3 } from "hash-wasm";\nexport const h = createBLAKE3;\n',
  "packages/wire/test/wire.test.ts":
    'import fc from "fast-check";\nimport { h } from "@sbx/wire";\nvoid fc; void h;\n',
  "packages/jcp-grant/package.json": pkg(
    "@sbx/jcp-grant",
    { "@sbx/wire": "0.1.0" },
    {
      ".": "./src/index.ts",
      "./grant": "./src/grant.ts",
    },
  ),
  "packages/jcp-grant/src/index.ts": 'export { h } from "@sbx/wire";\nexport * from "./grant.ts";\n',
  "packages/jcp-grant/src/grant.ts": "export const g = 1;\n",
  "packages/host/package.json": pkg("@sbx/host", { "@sbx/wire": "0.1.0", "@sbx/jcp-grant": "0.1.0" }),
  "packages/host/src/index.ts":
    'import { readFileSync } from "node:fs";\nimport type { h } from "@sbx/wire";\n' +
    'export const load = async () => (await import("@sbx/jcp-grant/grant")).g;\nvoid readFileSync;\nexport type H = typeof h;\n',
  "packages/host/test/host.test.ts": 'import { g } from "../../jcp-grant/test/fixture.ts";\nvoid g;\n',
  "packages/jcp-grant/test/fixture.ts": "export const g = 2;\n",
  "bench/host.bench.ts":
    'import { load } from "@sbx/host";\nimport fc from "fast-check";\nimport { createBLAKE3 } from "hash-wasm";\nvoid load; void fc; void createBLAKE3;\n',
};

/** Each break: files added to (or replacing those of) the clean workspace, and the line it must cause. */
const BREAKS: [string, Files, string][] = [
  [
    "a static import of a layer above",
    { "packages/wire/src/up.ts": 'import { load } from "@sbx/host";\nvoid load;\n' },
    'packages/wire/src/up.ts:1: "@sbx/host": layer: wire may not import host',
  ],
  [
    "a dynamic import of a layer above",
    { "packages/wire/src/late.ts": 'export async function f() {\n  return import("@sbx/jcp-grant");\n}\n' },
    'packages/wire/src/late.ts:2: "@sbx/jcp-grant": layer: wire may not import jcp-grant',
  ],
  [
    "a re-export of a layer above",
    { "packages/jcp-grant/src/re.ts": 'export * as host from "@sbx/host";\n' },
    'packages/jcp-grant/src/re.ts:1: "@sbx/host": layer: jcp-grant may not import host',
  ],
  [
    "a type-only import of a layer above",
    { "packages/jcp-grant/src/t.ts": 'import type { H } from "@sbx/host";\nexport type T = H;\n' },
    'packages/jcp-grant/src/t.ts:1: "@sbx/host": layer: jcp-grant may not import host',
  ],
  [
    "a test importing a layer above",
    { "packages/wire/test/up.test.ts": 'import "@sbx/host";\n' },
    'packages/wire/test/up.test.ts:1: "@sbx/host": layer: wire may not import host',
  ],
  [
    "a layer below that is not declared",
    {
      "packages/host/package.json": pkg("@sbx/host", { "@sbx/jcp-grant": "0.1.0" }),
      "packages/host/src/w.ts": 'export { h } from "@sbx/wire";\n',
    },
    'packages/host/src/index.ts:2: "@sbx/wire": undeclared: @sbx/wire is not in packages/host dependencies',
  ],
  [
    "an undeclared third-party package in src/",
    { "packages/host/src/pad.ts": 'import pad from "left-pad";\nvoid pad;\n' },
    'packages/host/src/pad.ts:1: "left-pad": undeclared: left-pad is not in packages/host dependencies',
  ],
  [
    "an undeclared third-party package in bench/",
    { "bench/pad.bench.ts": 'import pad from "left-pad/index.js";\nvoid pad;\n' },
    `bench/pad.bench.ts:1: "left-pad/index.js": undeclared: left-pad is not in the root devDependencies or any package's dependencies`,
  ],
  [
    "a subpath the package does not export",
    { "packages/host/src/deep.ts": 'import { g } from "@sbx/jcp-grant/src/grant.ts";\nvoid g;\n' },
    'packages/host/src/deep.ts:1: "@sbx/jcp-grant/src/grant.ts": not-exported: @sbx/jcp-grant exports no "./src/grant.ts"',
  ],
  [
    "a relative path into another package",
    { "packages/host/src/rel.ts": 'import { h } from "../../wire/src/index.ts";\nvoid h;\n' },
    'packages/host/src/rel.ts:1: "../../wire/src/index.ts": outside: reaches outside packages/host',
  ],
  [
    "a test sharing the fixtures of a layer above",
    { "packages/jcp-grant/test/up.test.ts": 'import { x } from "../../host/test/fixture.ts";\nvoid x;\n' },
    'packages/jcp-grant/test/up.test.ts:1: "../../host/test/fixture.ts": outside: reaches outside packages/jcp-grant',
  ],
  [
    "the demo reaching into a package's sources",
    { "scripts/demo.ts": 'import { load } from "../packages/host/src/index.ts";\nvoid load;\n' },
    'scripts/demo.ts:1: "../packages/host/src/index.ts": into-package: import the package by its name',
  ],
  [
    "an exports entry naming a missing file",
    {
      "packages/wire/package.json": pkg(
        "@sbx/wire",
        { "hash-wasm": "4.13.0" },
        { ".": "./src/index.ts", "./x": "./src/x/index.ts" },
      ),
    },
    'packages/wire/package.json: missing-export: "./x" names ./src/x/index.ts, which does not exist',
  ],
  [
    "a dependency src/ never imports",
    {
      "packages/jcp-grant/package.json": pkg(
        "@sbx/jcp-grant",
        { "@sbx/wire": "0.1.0", "jsonc-parser": "3.3.1" },
        { ".": "./src/index.ts", "./grant": "./src/grant.ts" },
      ),
    },
    "packages/jcp-grant/package.json: unused-dependency: jsonc-parser is never imported by its src/",
  ],
  [
    "the host (the engine) importing the CLI, a front door above it",
    {
      "packages/cli/package.json": pkg("@sbx/cli", { "@sbx/host": "0.1.0" }),
      "packages/cli/src/index.ts": 'export { load } from "@sbx/host";\n',
      "packages/host/src/usage.ts": 'import { load } from "@sbx/cli";\nvoid load;\n',
    },
    'packages/host/src/usage.ts:1: "@sbx/cli": layer: host may not import cli',
  ],
  [
    "the host reaching into the CLI's sources by a relative path",
    {
      "packages/host/src/usage.ts":
        'import { UsageError } from "../../cli/src/command.ts";\nvoid UsageError;\n',
    },
    'packages/host/src/usage.ts:1: "../../cli/src/command.ts": outside: reaches outside packages/host',
  ],
  [
    "a package with no layer",
    { "packages/extra/package.json": pkg("@sbx/extra", {}), "packages/extra/src/index.ts": "export {};\n" },
    "packages/extra: no-layer: add it to ALLOWED in scripts/layers.mjs",
  ],
];

/** layers writes a workspace and runs the check on it: its exit status and problem lines. */
function layers(files: Files): { status: number | null; lines: string[] } {
  const root = mkdtempSync(join(tmpdir(), "sbx-layers-"));
  try {
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text);
    }
    const r = spawnSync(process.execPath, [SCRIPT, root], { encoding: "utf8" });
    return { status: r.status, lines: r.stderr.split("\n").filter((l) => l && !l.startsWith("layers:")) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test("a workspace that keeps the layering passes", () => {
  assert.deepEqual(layers(CLEAN), { status: 0, lines: [] });
});

for (const [i, [what, files, want]] of BREAKS.entries())
  test(`case ${i}: ${what} is refused`, () => {
    const r = layers({ ...CLEAN, ...files });
    assert.equal(r.status, 1, `case ${i}: exit status`);
    assert.ok(
      r.lines.includes(want),
      `case ${i}: got ${JSON.stringify(r.lines)}, want ${JSON.stringify(want)}`,
    );
  });
