// A shell script run as one unit in a fresh sandbox (§5), optionally gated (§5.5.5): the one place
// the escape battery, the C8 live battery and the host's sandbox tests build such a run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, generateKeyPair, type KeyPair } from "@sbx/wire";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { policyAddress, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import type { SandboxOptions } from "../sandbox/sandbox.ts";
import { runUnit, type RunUnitOptions, type RunUnitResult } from "./run.ts";

/** What runScript takes besides the script: the sandbox (a fresh workspace when none is named), the gate. */
export interface ScriptOptions {
  readonly sandbox?: Partial<SandboxOptions>;
  /** Gate the run with this policy (§5.5.5); the attestation binds its address. */
  readonly execPolicy?: ExecPolicy;
  readonly gateOptions?: RunUnitOptions["gateOptions"];
  /** Signs the receipt and the attestation (default: a fresh key for this run). */
  readonly hostKey?: KeyPair;
  /** The run-record head the interval continues (§13); with it the level can reach S5 and S6. */
  readonly runHead?: RunUnitOptions["runHead"];
  /** Default 30 s. */
  readonly timeoutMs?: number;
}

/**
 * runScript runs `/bin/sh -c script` as a unit in a sandbox (§5) and returns its attested record.
 * A fresh workspace is made and removed when `o.sandbox.workspace` is not given. No manifest, no
 * grant set; the unit descriptor is the one runUnit builds by default.
 */
export async function runScript(script: string, o: ScriptOptions = {}): Promise<RunUnitResult> {
  const workspace = o.sandbox?.workspace ?? mkdtempSync(join(tmpdir(), "sbx-script-"));
  const argv = ["/bin/sh", "-c", script];
  const none = addressOf({});
  try {
    return await runUnit({
      argv,
      hostKey: o.hostKey ?? generateKeyPair(),
      unitId: unitId(makeUnit({ argv, manifest: none, level: "S0" })),
      grantsId: none,
      manifest: none,
      policy: o.execPolicy === undefined ? none : policyAddress(o.execPolicy),
      ...(o.execPolicy === undefined ? {} : { execPolicy: o.execPolicy }),
      ...(o.gateOptions === undefined ? {} : { gateOptions: o.gateOptions }),
      ...(o.runHead === undefined ? {} : { runHead: o.runHead }),
      sandbox: { ...o.sandbox, workspace },
      timeoutMs: o.timeoutMs ?? 30_000,
    });
  } finally {
    if (o.sandbox?.workspace === undefined) rmSync(workspace, { recursive: true, force: true });
  }
}
