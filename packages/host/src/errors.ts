// The one error class of @sbx/host: a stable `code` naming what the host refused or what broke on
// disk, a human message, and an optional cause. Tests assert the code. Each module adds its codes.
import { CodedError, type WireErrorCode } from "@sbx/wire";

/** Codes a host refusal carries. */
export type HostErrorCode =
  // §13 snapshots and the file-backed store
  | "UnsupportedFileKind"
  | "UnsupportedMode"
  | "UnsupportedName"
  | "RestoreTargetNotEmpty"
  | "StoreUnusable"
  | "StoreWriteFailed"
  | "WorkspaceChanged"
  | "WorkspaceUnreadable"
  | "DirectoryTooLarge"
  | "TreeTooDeep"
  | "RestoreFailed"
  | "UnsafePath"
  // §5.5 the exec gate
  | "GateUnavailable"
  | "GateFailed"
  // §5 the sandbox: not buildable here, a limit no hierarchy applies, a cgroup that outlives its kill
  | "SandboxUnavailable"
  | "SandboxFailed"
  // §8.2 argv[0] names no executable file in the sandbox's own view (its image, its workspace)
  | "ProgramNotFound"
  // §14.9.6 the sandbox was not built from what the attested manifest pins: nothing is signed
  | "SandboxMismatch"
  | "LimitUnavailable"
  // §5.3 the workspace's own bounded filesystem cannot be made, or another sandbox holds it
  | "DiskLimitUnavailable"
  | "TreeCopyFailed"
  | "WorkspaceBusy"
  | "CgroupBusy"
  // §6 meters: RAPL, cgroup and /proc readers
  | "BadPowercap"
  | "BadCgroupStat"
  | "BadProcStat"
  | "ProcessGone"
  | "CgroupUnavailable"
  | "MeterStopped"
  // §15 warm pools on disk
  | "PoolExists"
  | "PoolMissing"
  | "PoolWriteFailed"
  // §15.2 a pool folder of the older one-file ledger form, or a log entry that is not envelope lines
  | "PoolLedgerFormat"
  // §15.7.1 the pool's ledger is a log in another store than the one selected
  | "PoolLedgerElsewhere"
  | "PoolEmpty"
  // §15.4 a claimed item's parked sandbox is gone, not frozen, or has no waiter: never a cold start
  | "PoolItemLost"
  // §15.4 a claim into a run took an item of a pool without parked sandboxes (pool/claimrun.ts)
  | "PoolItemNotParked"
  // §15.4 a claim's grant needs what a parked sandbox cannot take: binds, ports, a gate (pool/claimgrant.ts)
  | "PoolGrantUnsupported"
  // the append-only log of chained ledgers: another writer extended the head; a broken log
  | "StaleHead"
  | "LogBroken"
  // §14.9 images: the store, import, layers unpacked into a rootfs, and the checks a run or resume makes
  | "ImageInvalid"
  | "ImageTooLarge"
  | "ImageUnnamed"
  | "ImageNotInStore"
  | "ImageDigestMismatch"
  | "ImageStoreUnusable"
  | "LayerAbsolutePath"
  | "LayerPathEscapes"
  | "LayerLinkEscapes"
  | "LayerDeviceNode"
  | "RootfsMismatch"
  | "RequirementsUnmet"
  | "WorkspaceFolderUnusable"
  // jcp grants governing a run: the grants do not cover what the run needs
  | "GrantsInsufficient"
  | "ResourceUnsupported"
  | "BudgetExhausted"
  // the PostgreSQL store: the server cannot be reached within the retry time; a row that does not
  // match what its chain or its address says (altered in the database)
  | "StoreUnreachable"
  | "StoreCorrupt"
  // moving between stores: the destination holds a record that is not a prefix of the source's
  | "RecordDiverged"
  // moving between stores: the destination holds a ledger that is not a prefix of the source's
  | "LogDiverged"
  // §13 durable runs from the command line: freezer, the run's lock, the supervisor's control channel
  | "FreezeFailed"
  | "RunBusy"
  | "RunNotLive"
  | "BadIntervalFile"
  | "ControlFailed"
  // §13.10a item 9 `sbx wait --timeout`: the run was still going when the wait gave up
  | "WaitTimeout"
  // §13.10 run archives and run references
  | "BadArchive"
  | "DuplicateMember"
  | "UnexpectedMember"
  | "ArchiveTooLarge"
  | "ArchiveIncomplete"
  | "RunNotFound"
  | "RunAmbiguous"
  // a run reference that is not a run id or a prefix of one (stores/runref.ts)
  | "BadRunRef"
  // a jcp log (spend, mint, checkpoint) that is not an append-only log of its entries (ledger/)
  | "BadLedger"
  // a grant set that names a leaf twice, or an amendment log given beside a set (grants/grantrun.ts)
  | "BadGrantSet"
  // files the host reads and writes for its callers (files.ts, keys.ts): unusable input or output,
  // its path in the error's detail (`input` or `output`)
  | "Unreadable"
  | "NotAFile"
  | "Unwritable"
  | "OutputExists"
  | "BadKeyFile"
  | "KeyMismatch"
  // an input file refused by the §2.1/§2.9 strict parser before any check of its content
  | WireErrorCode;

/** The host error class: `code` from HostErrorCode, and a message. */
export class HostError extends CodedError<HostErrorCode> {
  override readonly name = "HostError";
}

/** isHostError reports whether `e` is a HostError, optionally with `code`. */
export function isHostError(e: unknown, code?: HostErrorCode): e is HostError {
  return e instanceof HostError && (code === undefined || e.code === code);
}
