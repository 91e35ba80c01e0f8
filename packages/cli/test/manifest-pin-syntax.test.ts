// `sbx manifest pin` on a devcontainer.json with a syntax error (issue 29): exit 2 naming
// FILE:LINE:COLUMN, and nothing written (no image store is even opened).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";

test("a syntax error is exit 2 with line and column, and no output file", async () => {
  const d = mkdtempSync(join(tmpdir(), "sbx-pin-syntax-"));
  const src = join(d, "devcontainer.json");
  writeFileSync(src, '{\n  // comments and trailing commas are JSONC\n  "image": "x:1",\n  "name": \n}\n');
  const err: string[] = [];
  const code = await runCli(
    "sbx",
    ["manifest", "pin", src, "--out", join(d, "out.json"), "--images", join(d, "i")],
    {
      out: () => undefined,
      err: (l) => err.push(l),
    },
  );
  assert.equal(code, 2, err.join("\n"));
  assert.equal(
    err.join("\n"),
    `sbx manifest pin: ${src}:5:1: ValueExpected: nothing written; see sbx manifest pin --help`,
  );
  assert.equal(existsSync(join(d, "out.json")), false);
});
