// §14.9.6 Nothing is signed for a sandbox that was not built from what the attested manifest pins
// (run/built.ts): a run stating an image its sandbox does not have is refused before signing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey, type Digest } from "@sbx/wire";
import { isHostError } from "../../src/errors.ts";
import { runUnit, type RunUnitOptions } from "../../src/run/index.ts";

const d = (s: string): Digest => addressOf({ built_test: s });
const base = {
  hostKey: testKey("host"),
  unitId: d("unit"),
  unit: { built_test: "unit" },
  grantsId: d("grants"),
  manifest: d("manifest"),
  policy: d("policy"),
  meter: { sampleMs: 20 },
} as const;

function opts(pinnedImage: string | null): RunUnitOptions {
  return {
    ...base,
    argv: ["true"],
    sandbox: { workspace: mkdtempSync(join(tmpdir(), "sbx-built-")) },
    pinnedImage,
  };
}

test("a sandbox on the host's /usr is not signed under a manifest that pins an image", async () => {
  const hex = "ab".repeat(32);
  await assert.rejects(
    runUnit(opts(hex)),
    (e) =>
      isHostError(e, "SandboxMismatch") &&
      e.message.includes(
        `built from the host's /usr (no image), but the manifest it would be attested under pins image sha256:${hex}`,
      ),
  );
});

test("the same sandbox under a manifest that pins no image is signed, and states its system", async () => {
  const r = await runUnit(opts(null));
  assert.deepEqual(r.outcome, { status: "exited", exit_code: 0 });
  assert.equal(r.provided?.image, null);
});
