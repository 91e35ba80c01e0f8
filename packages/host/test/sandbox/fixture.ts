// Test helper: one script run as a unit in a fresh sandbox, as the resource tests need it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { runUnit, type RunUnitResult } from "../../src/run/index.ts";
import type { SandboxOptions } from "../../src/sandbox/index.ts";

const none = addressOf({});

/** inSandbox runs `/bin/sh -c script` in a fresh sandbox (or o.workspace) and returns the run. */
export async function inSandbox(script: string, o: Partial<SandboxOptions> = {}): Promise<RunUnitResult> {
  const workspace = o.workspace ?? mkdtempSync(join(tmpdir(), "sbx-resources-"));
  const argv = ["/bin/sh", "-c", script];
  try {
    return await runUnit({
      argv,
      hostKey: testKey("host"),
      unitId: unitId(makeUnit({ argv, manifest: none, level: "S0" })),
      grantsId: none,
      manifest: none,
      policy: none,
      sandbox: { ...o, workspace },
      timeoutMs: 30_000,
    });
  } finally {
    if (o.workspace === undefined) rmSync(workspace, { recursive: true, force: true });
  }
}
