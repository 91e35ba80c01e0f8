// `npm run demo -- NN` (scripts/demo.ts): a part that does not exist is a usage error (exit 2)
// naming the parts there are, and nothing runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const DEMO = fileURLToPath(new URL("../../../scripts/demo.ts", import.meta.url));

test("a demo part that does not exist exits 2 and names the parts", () => {
  const r = spawnSync(process.execPath, ["--import", "tsx", DEMO, "99"], { encoding: "utf8" });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^demo: no part 99; the parts are 01, 02, /);
  assert.doesNotMatch(r.stdout, /==/, "no part ran");
});
