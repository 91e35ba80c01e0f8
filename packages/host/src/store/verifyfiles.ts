// §13.9 Verification of a run from files alone: the I/O for verifyRun (sandbox-attest/store), which
// holds every rule: the record file read as its store will settle it, objects read from the store,
// snapshot leaves hashed as streams. The report is what `sbx verify` prints.
import { readFileSync, statSync } from "node:fs";
import { isDigest, type Digest } from "@sbx/wire";
import { decodeRecord, type RunEnergy, type Segment } from "@sbx/sandbox-attest/runrecord";
import { verifyRun, type RunChecked, type RunObjects, type RunVerification } from "@sbx/sandbox-attest/store";
import { isHostError } from "../errors.ts";
import { checkLeafFound, hashStoredObject } from "../snapshot/verify.ts";
import type { FileStore } from "./filestore.ts";
import { readSettled } from "./records.ts";

/** What to hold the record to beyond its own consistency. */
export interface VerifyFilesOptions {
  /** The head the record must end at (detects a record cut back at a line boundary). */
  readonly expectHead?: Digest;
  /**
   * The trust set: when given, every attestation must be by one of these host did:keys
   * (`HostMismatch`), and so must every signed energy receipt (§7.5: by the attestation's host).
   */
  readonly hosts?: readonly string[];
}

/** One segment as the report shows it. */
export interface SegmentReport {
  readonly n: number;
  readonly kind: Segment["kind"];
  readonly head: Digest;
  readonly detail: string;
}

/** The result of verifying a record from files. */
export interface FilesReport {
  readonly valid: boolean;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly unit_id: Digest | null;
  readonly grants_id: Digest | null;
  readonly head: Digest | null;
  readonly phase: string | null;
  readonly phases: Record<Segment["kind"], number>;
  readonly segments: readonly SegmentReport[];
  readonly energy: RunEnergy | null;
  readonly checked: RunChecked;
  readonly missing: readonly string[];
  /** Every did:key whose valid signature was checked on an object the record references, sorted. */
  readonly signers: readonly string[];
}

function detail(s: Segment): string {
  if (s.kind === "executed") return `attestation ${s.attestation}`;
  if (s.kind === "suspended")
    return `snapshot fs_root ${s.snapshot.fs_root}${s.snapshot.memory ? ` memory ${s.snapshot.memory}` : ""} manifest ${s.snapshot.manifest}`;
  if (s.kind === "resumed") return `idle ${s.idle_uj} µJ ${s.idle_provenance} (${s.idle_source})`;
  if (s.kind === "moved")
    return `moved to ${JSON.stringify(s.to)}, head handed off ${s.head}, signed by ${s.signer}`;
  return `outcome ${s.outcome}`;
}

/** storeObjects is the I/O verifyRun reads a file-backed store through (leaves hashed as streams). */
export function storeObjects(store: FileStore): RunObjects {
  return {
    getObject: (a) => store.getObjectSync(a),
    getSigned: (a) => store.getSignedSync(a),
    checkLeaf: (a, size, path) => {
      const got = hashStoredObject(store, a);
      checkLeafFound(got, a, size, path);
    },
  };
}

/**
 * settledView returns the record as its store's next writer will settle it, when `recordPath` is
 * that store's own file for the record and the file ends in a partly written line that is a prefix
 * of the append its claim committed (§13.7: a segment whose claim is published is committed): the
 * writer was interrupted mid-line, and the claim completes it. Read-only: nothing is written.
 * Anything else (unclaimed or foreign torn bytes, a file that simply ends at a line boundary,
 * anything unreadable) leaves the raw bytes to be judged as the file holds them, so a flipped or
 * cut-back record is still refused.
 */
function settledView(recordPath: string, store: FileStore | null, raw: Uint8Array): Uint8Array {
  if (store === null) return raw;
  try {
    const decoded = decodeRecord(raw, { allowTorn: true });
    if (decoded.tornBytes === 0) return raw;
    const id = decoded.record.genesis;
    const own = statSync(store.recordPath(id));
    const given = statSync(recordPath);
    if (own.ino !== given.ino || own.dev !== given.dev) return raw;
    const settled = readSettled(store.root, id);
    const extendsRaw =
      settled.bytes.length > raw.length && Buffer.compare(settled.bytes.subarray(0, raw.length), raw) === 0;
    return settled.report.rolledForward > 0 && settled.report.cutBytes === 0 && extendsRaw
      ? settled.bytes
      : raw;
  } catch {
    return raw;
  }
}

/** reportOf shapes a run's verification as the report `sbx verify` prints. */
export function reportOf(run: RunVerification): FilesReport {
  const phases = { executed: 0, suspended: 0, resumed: 0, closed: 0, moved: 0 };
  const r = run.record;
  const segments: SegmentReport[] = [];
  r?.segments.forEach((s, i) => {
    phases[s.kind]++;
    segments.push({ n: i + 1, kind: s.kind, head: r.heads[i + 1]!, detail: detail(s) });
  });
  return {
    valid: run.valid,
    error: run.error,
    unit_id: r?.unitId ?? null,
    grants_id: r?.grantsId ?? null,
    head: r?.head ?? null,
    phase: r?.phase ?? null,
    phases,
    segments,
    energy: run.energy,
    checked: run.checked,
    missing: run.missing,
    signers: run.signers,
  };
}

/**
 * verifyRunFile verifies the record at `recordPath` and, with a store, every object it references
 * (§13.9, by verifyRun in sandbox-attest: this module supplies only the I/O). Never throws for a bad
 * record or object: the first failure is the result's `error` with its spec code. Throws only when
 * the record file cannot be read at all (the caller's "unusable input"). With a store holding the
 * record, an append committed by its claim whose line the writer left half written is verified as
 * committed (the settled view), read-only.
 */
export function verifyRunFile(
  recordPath: string,
  store: FileStore | null,
  opts: VerifyFilesOptions = {},
): { report: FilesReport; run: RunVerification } {
  const bytes = settledView(recordPath, store, readFileSync(recordPath));
  const run = verifyRun(bytes, store === null ? null : storeObjects(store), opts, isHostError);
  return { report: reportOf(run), run };
}

/** verifyRecordFiles is verifyRunFile's report alone (§13.9). */
export function verifyRecordFiles(
  recordPath: string,
  store: FileStore | null,
  opts: VerifyFilesOptions = {},
): FilesReport {
  return verifyRunFile(recordPath, store, opts).report;
}

/** isHeadArg reports whether a command-line head is a digest. */
export function isHeadArg(s: string | undefined): s is Digest {
  return isDigest(s);
}
