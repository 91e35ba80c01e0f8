// §13 What a host reads from a run record before it acts on it: the record verified from genesis,
// every executed interval's attestation opened and checked against the run, and the energy receipt
// chain replayed, so the next interval continues the chain where the last host left it (§6.4).
import type { Digest } from "@sbx/wire";
import { verifyAttestation, type Outcome } from "@sbx/sandbox-attest/attestation";
import { verifyEnergyChain, type EnergyChainState } from "@sbx/sandbox-attest/energy";
import { SandboxAttestError, type RunRecord } from "@sbx/sandbox-attest/runrecord";
import { readRun, type Store } from "@sbx/sandbox-attest/store";

/** A run read for acting on: the record, its receipt chain's state, and its active energy so far. */
export interface VerifiedRun {
  readonly record: RunRecord;
  readonly chain: EnergyChainState;
  readonly active_uj: bigint;
  /** The attestations' hosts, in order of the executed segments. */
  readonly hosts: readonly string[];
  /** The exec policy address the last attestation states, or null before any. */
  readonly policy: Digest | null;
  /** The outcome the last attestation states, or null before any. */
  readonly lastOutcome: Outcome | null;
}

/**
 * readVerifiedRun (§13.4, §13.9) reads the record `id` and verifies it from genesis (readRun), then
 * opens every executed segment's attestation (`ObjectMissing` when the store lacks it; attestation
 * codes when it does not verify), checks it names this run's unit and grant set (`BadRecord`),
 * and replays the receipts it cites as one chain (energy chain codes).
 */
export async function readVerifiedRun(store: Store, id: Digest): Promise<VerifiedRun> {
  const record = await readRun(store, id);
  const receipts: unknown[] = [];
  const hosts: string[] = [];
  let policy: Digest | null = null;
  let lastOutcome: Outcome | null = null;
  for (const seg of record.segments) {
    if (seg.kind !== "executed") continue;
    const env = await store.getSigned(seg.attestation);
    if (env === null)
      throw new SandboxAttestError("ObjectMissing", `attestation ${seg.attestation} is not in the store`);
    const a = verifyAttestation(env);
    if (a.address !== seg.attestation) throw new SandboxAttestError("ObjectMismatch", "attestation address");
    const p = a.predicate;
    if (p.unit_id !== record.unitId || p.grants_id !== record.grantsId)
      throw new SandboxAttestError("BadRecord", `attestation ${a.address} belongs to another run`);
    const r = await store.getSigned(p.energy.receipt);
    if (r === null)
      throw new SandboxAttestError("ObjectMissing", `receipt ${p.energy.receipt} is not in the store`);
    receipts.push(r);
    hosts.push(p.host);
    policy = p.exec_policy;
    lastOutcome = p.outcome;
  }
  const chain = verifyEnergyChain(receipts, { unit_id: record.unitId, grants_id: record.grantsId });
  return { record, chain: chain.state, active_uj: BigInt(chain.total_uj), hosts, policy, lastOutcome };
}
