// The one error class of @sbx/sandbox-attest: a stable `code` named by the spec (§2.9, and each
// section's own failure names), a human message, and an optional cause. Tests assert the code.
import { CodedError } from "@sbx/wire";

/** Codes a sandbox-attest refusal carries. Each section adds its own names to this union. */
export type SandboxAttestErrorCode =
  // §4 Units and grant binding
  | "BadUnit"
  // §5.5 Content-addressed process control
  | "BadExecPolicy"
  | "ExecPolicyBadDigest"
  | "ExecPolicyUnsorted"
  | "ExecPolicyDuplicate"
  | "ExecPolicyMismatch"
  | "ExecDenied"
  // §6 Energy: receipts, provenance, models, receipt chains
  | "BadEnergyReceipt"
  | "BadComponent"
  | "BadProvenance"
  | "BadRatio"
  | "RatioAboveOne"
  | "UnknownModel"
  | "BadCoefficients"
  | "EstimateMismatch"
  | "AttributionMismatch"
  | "EnergyTotalMismatch"
  | "EnergyBadInterval"
  | "EnergyIntervalOverlap"
  | "EnergyChainGap"
  | "EnergyChainReorder"
  | "EnergyChainSplice"
  | "EnergyChainHeadMismatch"
  | "ReceiptNotByHost"
  // §7 Attestation
  | "BadStatement"
  | "BadPredicate"
  | "SubjectMismatch"
  | "SignerNotHost"
  | "HostMismatch"
  | "UnitMismatch"
  | "GrantsMismatch"
  | "ManifestMismatch"
  | "PolicyMismatch"
  | "ReceiptMismatch"
  | "JournalMismatch"
  | "RunHeadMismatch"
  | "AuditPrevMismatch"
  // §7.7 Audit chain
  | "AuditUnlinked"
  | "AuditGap"
  | "AuditReorder"
  | "AuditInsert"
  | "AuditSplice"
  | "AuditFork"
  // §8 Replay journal and its Merkle trees
  | "BadTreeHead"
  | "InclusionProofInvalid"
  | "ConsistencyProofInvalid"
  | "UnknownEventType"
  | "UnknownEventField"
  | "MalformedEvent"
  | "EventOutOfOrder"
  | "JournalRootMismatch"
  // §15 Warm pools
  | "BadPoolEntry"
  | "PoolChainBroken"
  | "DuplicateItem"
  | "UnknownItem"
  | "DoubleClaim"
  | "ZeroEnergy"
  | "AccruedMismatch"
  | "AccrualGap"
  | "TimeReversed"
  | "Unattributed"
  | "ConservationViolated"
  | "PoolClosed"
  | "ClaimNotCharged"
  // §16 Fleet records
  | "BadFleetItem"
  | "BadFleetReceipt"
  | "DuplicateFleetItem"
  | "FleetProofSize"
  | "FleetRootMismatch"
  | "FleetSumMismatch"
  | "FleetIndexRange"
  | "FleetNotAppend"
  | "EnergyOverflow"
  // §13 Durable run records and the store interface
  | "BadSegment"
  | "BadRecord"
  | "TornRecord"
  | "HeadMismatch"
  | "GenesisMismatch"
  | "PhaseViolation"
  | "SnapshotMismatch"
  | "EnvironmentMismatch"
  | "RecordClosed"
  | "RunMoved"
  | "BadHandoff"
  | "TimeRegression"
  | "StaleHead"
  | "AppendConflict"
  | "RecordExists"
  | "RecordMissing"
  | "ObjectMissing"
  | "ObjectMismatch"
  | "BadFsTree"
  // §14 Environment manifests (each refusal lists its offending members in `members`)
  | "ManifestParseError"
  | "ManifestRefused"
  | "BadManifest";

/** One offending member of a refusal that names several (§14): its JSON pointer and a stable code. */
export interface MemberRefusal {
  readonly pointer: string;
  readonly code: string;
}

/** The sandbox-attest error class: `code` from SandboxAttestErrorCode, and a message. */
export class SandboxAttestError extends CodedError<SandboxAttestErrorCode> {
  override readonly name = "SandboxAttestError";
  /** Every offending member, where a refusal names several (§14); empty otherwise. */
  readonly members: readonly MemberRefusal[];

  /** A refusal naming several members carries them in its `detail` too, so they cross a boundary. */
  constructor(
    code: SandboxAttestErrorCode,
    message: string,
    options?: { cause?: unknown; members?: readonly MemberRefusal[] },
  ) {
    const members = options?.members ?? [];
    const detail =
      members.length === 0 ? {} : { members: members.map((m) => ({ pointer: m.pointer, code: m.code })) };
    super(code, message, { cause: options?.cause, detail });
    this.members = members;
  }
}

/** isSandboxAttestError reports whether `e` is a SandboxAttestError, optionally with `code`. */
export function isSandboxAttestError(e: unknown, code?: SandboxAttestErrorCode): e is SandboxAttestError {
  return e instanceof SandboxAttestError && (code === undefined || e.code === code);
}
