// One id rule everywhere (issue 29): `sbx suspend`, `resume` and `close` take the full run id or any
// unique prefix, with or without `blake3:`, as `sbx show` does; one message for an unknown id.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";

async function sbx(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

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
