// `sbx report` without a browser: the page's verification (checkRun) run under Node with the
// portable Ed25519 (@noble/curves, what a browser without WebCrypto Ed25519 uses) agrees with
// `sbx verify` on the host's fixture run, intact and with a byte changed in each kind of object; and
// the command's exit codes (2 for unusable input).
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { nobleBackend, testKey, useEd25519Backend } from "@sbx/wire";
import { FileStore, verifyRecordFiles } from "@sbx/host/store";
import { runCli } from "../../src/main.ts";
import { collectRun } from "../../src/report/collect.ts";
import { checkRun } from "../../src/report/verify.ts";
import { fixtureRun } from "../../../host/test/store/fixture-run.ts";

const HOST = testKey("host").did;

function pageVerdict(store: FileStore, recordPath: string) {
  const b = collectRun(readFileSync(recordPath), "r", {
    store,
    embedMax: 1 << 20,
    journals: [],
    trust: [HOST],
  });
  const before = useEd25519Backend(nobleBackend);
  try {
    return checkRun(b, [HOST]);
  } finally {
    useEd25519Backend(before);
  }
}

test("checkRun with @noble/curves agrees with sbx verify's verifyRecordFiles, intact and tampered", async () => {
  const run = await fixtureRun();
  const intact = pageVerdict(run.store, run.recordPath);
  const cli = verifyRecordFiles(run.recordPath, run.store, { hosts: [HOST] });
  assert.equal(intact.valid, true, JSON.stringify(intact.error));
  assert.equal(cli.valid, true);
  assert.deepEqual(intact.energy, cli.energy);
  assert.deepEqual(intact.signers, cli.signers);
  const targets = [
    run.store.signedPath(run.attestations[1]!),
    run.store.objectPath(run.snapshot.fs_root),
    run.store.objectPath(run.snapshot.manifest),
  ];
  for (const [i, path] of targets.entries()) {
    const bytes = readFileSync(path);
    const flipped = Buffer.from(bytes);
    flipped[Math.floor(flipped.length / 2)]! ^= 1;
    chmodSync(path, 0o644);
    writeFileSync(path, flipped);
    const page = pageVerdict(run.store, run.recordPath);
    const want = verifyRecordFiles(run.recordPath, run.store, { hosts: [HOST] });
    assert.equal(page.valid, false, `case ${i}`);
    assert.equal(
      page.error?.code,
      want.error?.code,
      `case ${i}: page ${page.error?.code}, sbx verify ${want.error?.code}`,
    );
    writeFileSync(path, bytes);
  }
});

test("sbx report: 0 written; 2 for a missing file, no store, a bad --head", async () => {
  const run = await fixtureRun();
  const sbx = async (args: string[]) => {
    const err: string[] = [];
    const code = await runCli("sbx", args, { out: () => undefined, err: (l) => err.push(l) });
    return { code, err: err.join("\n") };
  };
  const out = join(run.store.root, "..", "r.html");
  assert.equal((await sbx(["report", run.recordPath, "--out", out])).code, 0);
  assert.match(readFileSync(out, "utf8"), /<script type="module">/);
  assert.equal((await sbx(["report", "/nonexistent.runrecord", "--out", out])).code, 2);
  assert.equal((await sbx(["report", run.recordPath, "--out", out, "--head", "nope"])).code, 2);
  assert.equal((await sbx(["report", run.recordPath, "--out", out, "--store", "/nonexistent"])).code, 2);
  assert.equal((await sbx(["report", run.recordPath, "--out", "/nonexistent/dir/r.html"])).code, 2);
  assert.equal((await sbx(["report", "--out", out])).code, 2);
});
