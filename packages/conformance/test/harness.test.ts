// The harness itself: vectors:check catches any changed byte, the subprocess adapter speaks the
// JSON-lines protocol, and a class with no cases fails the run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { judge } from "../src/run.ts";
import { repoRoot, vectorsDir } from "../src/paths.ts";
import type { Vector } from "../src/types.ts";

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ["--import", "tsx", ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
}

test("vectors:check passes on the committed vectors and fails when one byte of core.json changes", () => {
  const ok = run(["packages/conformance/src/generate/main.ts", "--check"]);
  assert.equal(ok.status, 0, ok.stderr);
  const dir = mkdtempSync(join(tmpdir(), "vectors-"));
  try {
    cpSync(vectorsDir, dir, { recursive: true });
    const p = join(dir, "core.json");
    const bytes = readFileSync(p);
    for (const at of [0, Math.floor(bytes.length / 2), bytes.length - 2]) {
      const copy = Buffer.from(bytes);
      copy[at] = copy[at]! ^ 1;
      writeFileSync(p, copy);
      const r = run(["packages/conformance/src/generate/main.ts", "--check"], { SBX_VECTORS_DIR: dir });
      assert.equal(r.status, 1, `byte ${at} changed must fail the check`);
      assert.match(r.stderr, /core\.json/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the subprocess adapter runs C1 against the reference served over JSON lines", () => {
  const r = run([
    "packages/conformance/src/main.ts",
    "--class",
    "C1",
    "--adapter",
    `${process.execPath} --import tsx packages/conformance/src/serve.ts`,
  ]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /C1 .* [1-9]\d* passed, 0 failed, 0 skipped/);
});

test("a claimed class with no cases fails the run", () => {
  const dir = mkdtempSync(join(tmpdir(), "vectors-empty-"));
  try {
    const r = run(["packages/conformance/src/main.ts", "--class", "C1"], { SBX_VECTORS_DIR: dir });
    assert.equal(r.status, 1);
    assert.match(r.stdout, /0 passed, 0 failed, 0 skipped/);
    assert.match(r.stdout, /class has no cases/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("judge compares outputs canonically and codes exactly", () => {
  const v: Vector = {
    id: "x",
    class: "C1",
    desc: "",
    op: "o",
    input: null,
    expect: "ok",
    output: { a: 1, b: 2 },
  };
  assert.equal(judge(v, { ok: true, output: { b: 2, a: 1 } }), null);
  assert.match(judge(v, { ok: true, output: { a: 1 } }) ?? "", /got output/);
  assert.match(judge(v, { ok: false, error: "X" }) ?? "", /want ok/);
  const e: Vector = { ...v, expect: { error: "BadSignature" } };
  assert.equal(judge(e, { ok: false, error: "BadSignature" }), null);
  assert.match(
    judge(e, { ok: false, error: "NotCanonical" }) ?? "",
    /got error NotCanonical, want BadSignature/,
  );
  assert.match(judge(e, { ok: true, output: null }) ?? "", /got ok/);
});
