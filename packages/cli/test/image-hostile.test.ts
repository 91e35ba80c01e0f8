// `sbx image import` of hostile inputs (sandbox-attest §14.9.1): a name that is not NAME[:TAG] is
// ImageInvalid with exit 1, and a refused import into an image store that did not exist leaves no
// store behind (nor the folders made for it). The inputs are built here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";
import { baseLayer, buildImage, writeLayout } from "../../host/test/image/fixture.ts";

async function sbx(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

test("image import: a name that is not NAME[:TAG] is ImageInvalid, exit 1, and no store is made", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-image-hostile-"));
  writeLayout(buildImage([baseLayer()]), join(dir, "layout"), null);
  for (const name of ["UPPER:1", "a/${HOME}", "x".repeat(300), "a:b:"]) {
    const r = await sbx(["image", "import", join(dir, "layout"), "--name", name, "--images", join(dir, "s")]);
    assert.equal(r.code, 1, `${name}: ${r.err}`);
    assert.match(r.err, /ImageInvalid/);
  }
  assert.equal(existsSync(join(dir, "s")), false);
});

test("image import: a refused import into a store that did not exist leaves nothing there", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-image-hostile-"));
  writeFileSync(join(dir, "junk.tar"), Buffer.alloc(4096, 0x41));
  const r = await sbx([
    "image",
    "import",
    join(dir, "junk.tar"),
    "--name",
    "a:1",
    "--images",
    join(dir, "new", "images"),
  ]);
  assert.equal(r.code, 1, r.err);
  assert.match(r.err, /ImageInvalid/);
  assert.equal(existsSync(join(dir, "new")), false, "the refused import made a store");
});
