// §5.5 battery, allowlist: ordinary toolchains (a shell pipeline, make, git) run when exactly the
// digests they execute are allowed, and nothing outside the list runs.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { withFixture, runSh, type Fixture } from "./fixture.ts";

const TOOLCHAIN = [
  "set -e",
  "echo 'alpha beta gamma' | tr a-z A-Z | wc -w > count.txt",
  "printf 'all:\\n\\techo made > made.txt\\n' > Makefile",
  "make -s",
  "rm -rf repo && mkdir repo && cd repo",
  "git init -q && git config user.email t@example.org && git config user.name t",
  "echo x > f && git add f && git commit -qm init",
  "git log --oneline | wc -l > ../commits.txt",
].join("\n");

let f: Fixture;
let policy: ExecPolicy;
let learned: Digest[];

withFixture(async (x) => {
  f = x;
  // Learn the toolchain's digests from one journaled run under an empty denylist.
  const learn = await runSh(f, makePolicy("denylist"), TOOLCHAIN);
  assert.equal(learn.code, 0, learn.stderr);
  learned = [...new Set(learn.decisions.flatMap((d) => (d.digest ? [d.digest] : [])))];
  policy = makePolicy("allowlist", learned, []);
});

describe("allowlist mode", () => {
  test("a shell pipeline, make and git run with their digests allowed", { timeout: 60_000 }, async () => {
    const r = await runSh(f, policy, TOOLCHAIN);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(f.ws, "count.txt"), "utf8").trim(), "3");
    assert.equal(readFileSync(join(f.ws, "made.txt"), "utf8").trim(), "made");
    assert.equal(readFileSync(join(f.ws, "commits.txt"), "utf8").trim(), "1");
    assert.ok(r.decisions.length >= 8, `decisions: ${r.decisions.length}`);
    assert.ok(
      r.decisions.every((d) => d.allowed && d.rule === "allowed"),
      JSON.stringify(r.decisions.filter((d) => !d.allowed)),
    );
    for (const tool of ["/usr/bin/tr", "/usr/bin/wc", "/usr/bin/make", "/usr/bin/git"])
      assert.ok(
        r.decisions.some((d) => d.path === tool),
        `${tool} journaled`,
      );
  });

  test("a binary outside the list is refused, in a pipeline too", { timeout: 60_000 }, async () => {
    const r = await runSh(
      f,
      policy,
      "./allowed; echo a=$?; echo x | /usr/bin/od -c; echo b=$?; /usr/bin/id; echo c=$?",
    );
    assert.ok(!r.stdout.includes("ALLOWED-RAN"), r.stdout);
    assert.match(r.stdout, /a=126/);
    assert.match(r.stdout, /b=126/);
    assert.match(r.stdout, /c=126/);
    for (const p of [f.ok, "/usr/bin/od", "/usr/bin/id"])
      assert.ok(
        r.decisions.some((d) => d.path === p && !d.allowed && d.rule === "not-allowed"),
        `${p} refused as not-allowed`,
      );
  });

  test("allowing its digest lets the same binary run, under any name", { timeout: 60_000 }, async () => {
    const p = makePolicy("allowlist", [...learned, f.okDigest], []);
    copyFileSync(f.ok, join(f.ws, "other"));
    chmodSync(join(f.ws, "other"), 0o755);
    const r = await runSh(f, p, "./other; ./allowed");
    assert.equal(r.stdout.match(/ALLOWED-RAN/g)?.length, 2, r.stdout + r.stderr);
    assert.ok(
      r.decisions.filter((d) => d.digest === f.okDigest).every((d) => d.allowed && d.rule === "allowed"),
    );
  });
});
