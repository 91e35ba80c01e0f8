// One id rule everywhere (issue 29): `sbx suspend`, `resume`, `close`, `verify` and `report` take the
// full run id or any unique prefix, with or without `blake3:`, as `sbx show` does; one message for an
// unknown id and one for an ambiguous prefix. (On PostgreSQL: run-id-rule-pg.test.ts.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStore } from "@sbx/host/store";
import { assertLikeShow, runsSharingADigit, sbx } from "./run-id-helpers.ts";

test("close takes the prefix sbx runs prints; suspend, resume and close name an unknown run alike", async () => {
  const store = mkdtempSync(join(tmpdir(), "sbx-idrule-"));
  const r = await sbx(["run", "--store", store, "--", "true"]);
  assert.equal(r.code, 0, r.err);
  const id = /run (blake3:[0-9a-f]{64})/.exec(r.out)?.[1] ?? "";
  const prefix = id.slice(0, 20); // what `sbx runs` shows
  const closed = await sbx(["close", prefix, "--store", store]);
  assert.equal(closed.code, 0, closed.err);
  assert.match(closed.out, /outcome completed/);
  const shown = await sbx(["show", id.slice(7, 19), "--store", store]);
  assert.equal(shown.code, 0, shown.err);
  for (const cmd of ["suspend", "resume", "close"]) {
    const u = await sbx([cmd, "blake3:ffff0000", "--store", store]);
    assert.equal(u.code, 2, `${cmd}: ${u.err}`);
    assert.match(
      u.err,
      new RegExp(`^sbx ${cmd}: RunNotFound: no run blake3:ffff0000 in store ${store}$`),
      cmd,
    );
  }
});

test("verify and report take a unique prefix, and refuse an ambiguous or unknown one as show does", async () => {
  const runs = await runsSharingADigit();
  const out = join(mkdtempSync(join(tmpdir(), "sbx-idrule-out-")), "report.html");
  await assertLikeShow("verify", ["--any-signer"], runs, runs.store);
  await assertLikeShow("report", ["--out", out], runs, runs.store);
  // A bad reference is the show's BadRunRef, not an unreadable file.
  const bad = await sbx(["verify", "blake3:xyz", "--store", runs.store, "--any-signer"]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^sbx verify: BadRunRef: RUN blake3:xyz is not a run id or a prefix of one$/);
});

test("a record file keeps its path, even one named like an ambiguous prefix", async () => {
  const runs = await runsSharingADigit();
  const here = mkdtempSync(join(tmpdir(), "sbx-idrule-cwd-"));
  const name = `blake3:${runs.shared}`;
  copyFileSync(FileStore.open(runs.store, { readOnly: true }).recordPath(runs.ids[0]!), join(here, name));
  const was = process.cwd();
  process.chdir(here);
  try {
    const v = await sbx(["verify", name, "--record-only", "--any-signer"]);
    assert.equal(v.code, 0, v.err);
    assert.match(v.out, /verdict: UNTRUSTED/);
    const r = await sbx(["report", name, "--record-only", "--out", "page.html"]);
    assert.equal(r.code, 0, r.err);
  } finally {
    process.chdir(was);
  }
});
