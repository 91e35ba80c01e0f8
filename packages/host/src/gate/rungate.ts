// The exec gate a run is under (sandbox-attest §5.5.5): the policy and its address, which the
// attestation binds as `exec_policy`. Read from a file by the CLI (`--exec-policy`), composed with a
// grant's /exec/ resources by grants/grantrun.ts.
import type { ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import type { Digest } from "@sbx/wire";

/** The gate of a run: the policy and its address. */
export interface RunGate {
  readonly execPolicy: ExecPolicy;
  readonly policy: Digest;
}
