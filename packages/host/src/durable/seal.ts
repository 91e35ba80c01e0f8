// §13 One durable interval sealed: its energy receipt (§6) continuing the run's chain, the level
// the host states for it (§9), and its attestation (§7) binding the receipt, the journal's tree head
// (§8) and the run head it continues. The one piece of code both a live sandbox's interval
// (session.ts, LiveSandbox) and a recovered one (recover.ts, recoverOrphan: §13.7.4, the interval
// of a supervisor that is gone) are sealed by; they differ only in what they give it.
import { envelopeAddress, type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import { signAttestation, type Outcome, type PredicateInput } from "@sbx/sandbox-attest/attestation";
import {
  makeReceipt,
  weakestProvenance,
  type EnergyChainState,
  type MadeReceipt,
  type MeterReading,
} from "@sbx/sandbox-attest/energy";
import type { Journal } from "@sbx/sandbox-attest/journal";
import type { Level } from "@sbx/sandbox-attest/unit";
import { providedLevel, statedLevel } from "../sandbox/level.ts";

/** What sealInterval needs: the chain and reading, the key, what the attestation names, and the facts of §9. */
export interface SealInput {
  /** The run's energy chain so far: the receipt continues it. */
  readonly chain: EnergyChainState;
  readonly reading: MeterReading;
  readonly hostKey: KeyPair;
  /** The unit (its descriptor as signAttestation takes it) and the addresses the predicate names. */
  readonly unit: unknown;
  readonly unitId: Digest;
  readonly grantsId: Digest;
  readonly manifest: Digest;
  readonly execPolicy: Digest;
  /** The interval's journal, whose tree head is bound (an empty one: no events). */
  readonly journal: Journal;
  readonly outcome: Outcome;
  /**
   * What the host provided beyond S3 (§9): a journal of the interval, the snapshots of a durable
   * run, the exec gate held. The sandbox, the meter and the attestation are always provided here.
   */
  readonly provided: {
    readonly journaled: boolean;
    readonly snapshots: boolean;
    readonly processControl: boolean;
  };
  /** A level the caller asks to state at most (statedLevel: it only lowers). */
  readonly maxLevel?: Level | undefined;
  /** The run head the interval continues (its attestation's run_head). */
  readonly runHead: Digest;
  /** Run once the receipt is made and before anything is signed for the interval: it may refuse (throw). */
  readonly beforeSign?: () => void;
}

/** A sealed interval: the receipt (with the chain's next state and its envelope), the attestation, their addresses. */
export interface Sealed {
  readonly receipt: MadeReceipt;
  readonly receiptAddress: Digest;
  readonly attestation: Envelope;
  readonly address: Digest;
  readonly level: Level;
}

/**
 * sealInterval makes the interval's receipt (makeReceipt on `chain`), states its level
 * (providedLevel of the facts, capped by `maxLevel`), and signs its attestation with `hostKey`.
 * Nothing is stored: the caller keeps the journal, the receipt and the attestation, then appends.
 */
export function sealInterval(i: SealInput): Sealed {
  const receipt = makeReceipt(i.chain, i.reading, i.hostKey);
  const receiptAddress = envelopeAddress(receipt.envelope);
  const level = statedLevel(
    providedLevel({
      isolated: true,
      metered: true,
      attested: true,
      journaled: i.provided.journaled,
      snapshots: i.provided.snapshots,
      processControl: i.provided.processControl,
      auditChain: false,
    }),
    i.maxLevel,
  );
  const j = i.journal.head();
  const predicate: PredicateInput = {
    unit_id: i.unitId,
    grants_id: i.grantsId,
    manifest: i.manifest,
    exec_policy: i.execPolicy,
    energy: {
      receipt: receiptAddress,
      total_uj: receipt.receipt.total_uj,
      provenance: weakestProvenance(receipt.receipt.components),
    },
    journal: { root: j.root, events: j.size },
    outcome: i.outcome,
    interval: { start_ms: i.reading.start_ms, end_ms: i.reading.end_ms },
    level,
    run_head: i.runHead,
  };
  i.beforeSign?.();
  const attestation = signAttestation(predicate, i.hostKey, i.unit);
  return { receipt, receiptAddress, attestation, address: envelopeAddress(attestation), level };
}
