// `sbx verify` (sandbox-attest §13.9): exit 0 valid, 1 invalid with the code, 2 unusable input.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testKey } from "@sbx/wire";
import { runCli } from "../src/main.ts";
import { fixtureRun } from "../../host/test/store/fixture-run.ts";

// The fixture's attestations are signed by testKey("host"): the trust every verification is given.
const TRUST = ["--trust", testKey("host").did];

async function sbx(args: string[]) {
  const argv = args[0] === "verify" && !args.includes("--host") ? [...args, ...TRUST] : args;
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

test("sbx verify: valid, --json, tampered, unusable", async () => {
  const run = await fixtureRun();
  const ok = await sbx(["verify", run.recordPath]);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, /active 4000000 µJ \+ idle 420000 µJ = total 4420000 µJ/);
  assert.match(ok.out, /verdict: VALID/);
  const js = await sbx(["verify", run.recordPath, "--json"]);
  assert.equal((JSON.parse(js.out) as { valid: boolean }).valid, true);
  const elsewhere = join(mkdtempSync(join(tmpdir(), "sbx-v-")), "r.runrecord");
  copyFileSync(run.recordPath, elsewhere);
  assert.equal((await sbx(["verify", elsewhere])).code, 2, "no store beside it");
  assert.equal((await sbx(["verify", elsewhere, "--store", run.store.root])).code, 0);
  assert.equal((await sbx(["verify", "/nonexistent.runrecord"])).code, 2);
  assert.equal(
    (
      await sbx([
        "verify",
        run.recordPath,
        "--host",
        "did:key:z6MkfCFXAvm1YLwCcsB5WQbQd4WaExPTpVxt46yrNuZrD6bw",
      ])
    ).code,
    1,
  );
  const text = readFileSync(run.recordPath, "utf8");
  chmodSync(run.recordPath, 0o644);
  writeFileSync(run.recordPath, text.replace('"idle_uj":"420000"', '"idle_uj":"42000"'));
  const bad = await sbx(["verify", run.recordPath, "--json"]);
  assert.equal(bad.code, 1);
  assert.equal((JSON.parse(bad.out) as { error: { code: string } }).error.code, "HeadMismatch");
});
