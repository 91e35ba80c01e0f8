// `sbx run --exec-policy FILE` (sandbox-attest §5.5.5): the exec policy a sandboxed run is gated by.
// The file is read like `sbx exec --policy` reads it (a plain policy, or a signed envelope verified,
// by --steward when given); its address is the one the attestation binds as `exec_policy`.
import { policyAddress } from "@sbx/sandbox-attest/execpolicy";
import { gateUnavailableReason, type RunGate } from "@sbx/host/gate";
import { UsageError } from "../../command.ts";
import { loadPolicy } from "./policy.ts";

export type { RunGate };

/**
 * gateOpt reads --exec-policy FILE (with --steward DID) for a sandboxed run, or returns null when
 * none is given. Usage errors: --exec-policy with --unsandboxed (a plain process cannot be gated),
 * --policy ADDR naming another policy, --steward without --exec-policy, or a host where the gate
 * cannot run (the run is refused rather than run ungated).
 */
export function gateOpt(
  file: string | undefined,
  steward: string | undefined,
  policyFlag: string | undefined,
  sandboxed: boolean,
): RunGate | null {
  if (file === undefined) {
    if (steward !== undefined) throw new UsageError("--steward needs --exec-policy FILE");
    return null;
  }
  if (!sandboxed) throw new UsageError("--exec-policy needs the sandbox: --unsandboxed runs cannot be gated");
  const why = gateUnavailableReason();
  if (why !== null) throw new UsageError(`--exec-policy: ${why}`);
  const execPolicy = loadPolicy(file, steward).policy;
  const policy = policyAddress(execPolicy);
  if (policyFlag !== undefined && policyFlag !== policy)
    throw new UsageError(`--policy ${policyFlag} is not the address of ${file} (${policy})`);
  return { execPolicy, policy };
}
