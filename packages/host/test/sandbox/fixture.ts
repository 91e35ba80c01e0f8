// Test helper: one script run as a unit in a fresh sandbox, as the resource tests need it (the
// library's runScript, the same code the escape and C8 batteries use).
import type { RunUnitResult } from "../../src/run/index.ts";
import { runScript } from "../../src/run/index.ts";
import type { SandboxOptions } from "../../src/sandbox/index.ts";

/** inSandbox runs `/bin/sh -c script` in a fresh sandbox (or o.workspace) and returns the run. */
export function inSandbox(script: string, o: Partial<SandboxOptions> = {}): Promise<RunUnitResult> {
  return runScript(script, { sandbox: o });
}
