// A durable run (§13) under an exec policy (§5.5.5): the policy is stored in the run store by
// address and named by the unit descriptor (label exec_policy, host/src/durable/cited.ts), so it is
// bound into unit_id and travels in a run archive. Every resume that starts a sandbox reads it back
// and gates the sandbox exactly as the first interval was; where it cannot (the object is absent
// or is not what the address names, or this host cannot run the gate) the resume is refused before
// anything is appended.
import { canonicalBytes, parseCanonical, type Digest } from "@sbx/wire";
import { parsePolicy, policyAddress, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import type { UnitDescriptor } from "@sbx/sandbox-attest/unit";
import { HostError } from "../errors.ts";
import { gateUnavailableReason } from "../gate/index.ts";
import { EXEC_POLICY_LABEL } from "./cited.ts";
import { NO_MANIFEST } from "./environment.ts";
import type { VerifiedRun } from "./record.ts";
import type { RunStore } from "../stores/index.ts";
import type { RunGate } from "../gate/index.ts";

/** storePolicy stores a gated run's policy and returns the unit labels that name it. */
export async function storePolicy(store: RunStore, gate: RunGate | null): Promise<Record<string, string>> {
  if (gate === null) return {};
  if ((await store.putObject(canonicalBytes(gate.execPolicy))) !== gate.policy)
    throw new Error("exec policy stored under another address");
  return { [EXEC_POLICY_LABEL]: gate.policy };
}

/** The policy a resumed interval runs under: its address, and the policy itself when gated. */
export interface RunPolicy {
  readonly policy: Digest;
  readonly execPolicy?: ExecPolicy;
}

/**
 * policyOfRun returns the policy the run's unit names, read back from the store. Refuses:
 * `BadRecord` when the record's attestations state another policy; `ObjectMissing` when the store
 * lacks it; `ObjectMismatch` when what is stored is not that policy; `GateUnavailable` when this
 * host cannot gate. A unit naming none keeps the address its attestations state (ungated).
 */
export async function policyOfRun(
  store: RunStore,
  unit: UnitDescriptor,
  vr: VerifiedRun,
): Promise<RunPolicy> {
  const named = unit.labels?.[EXEC_POLICY_LABEL];
  if (named === undefined) return { policy: vr.policy ?? NO_MANIFEST };
  if (vr.policy !== null && vr.policy !== named)
    throw new SandboxAttestError(
      "BadRecord",
      `the run's unit names exec policy ${named}, its record ${vr.policy}`,
    );
  const bytes = await store.getObject(named as Digest);
  if (bytes === null)
    throw new SandboxAttestError("ObjectMissing", `the run's exec policy ${named} is not in the store`);
  let execPolicy: ExecPolicy;
  try {
    execPolicy = parsePolicy(parseCanonical(bytes));
  } catch (e) {
    throw new SandboxAttestError("ObjectMismatch", `the stored exec policy ${named} does not parse`, {
      cause: e,
    });
  }
  if (policyAddress(execPolicy) !== named)
    throw new SandboxAttestError("ObjectMismatch", `the stored exec policy is not ${named}`);
  const why = gateUnavailableReason();
  if (why !== null) throw new HostError("GateUnavailable", `the run is gated by ${named}; ${why}`);
  return { policy: named, execPolicy };
}
