// §13.4 Operations on a run kept in a Store: read it verified from genesis, and resume it only when
// every precondition holds, appending the resumed segment by compare-and-append.
import type { Digest } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { RunRecord } from "../runrecord/record.ts";
import { checkResume, resumedSegment, type EnvironmentCheck, type IdleEnergy } from "../runrecord/resume.ts";
import type { SnapshotRef } from "../runrecord/segment.ts";
import { decodeRecord } from "../runrecord/wire.ts";
import type { RecordStore } from "./types.ts";

/** readRun reads a record from a store and verifies it from genesis; `RecordMissing` when absent. */
export async function readRun(store: RecordStore, id: Digest): Promise<RunRecord> {
  const bytes = await store.readRecordBytes(id);
  if (bytes === null) throw new SandboxAttestError("RecordMissing", `no record ${id}`);
  const { record } = decodeRecord(bytes);
  if (record.genesis !== id)
    throw new SandboxAttestError("GenesisMismatch", `record stored as ${id} has genesis ${record.genesis}`);
  return record;
}

/** What resuming a run needs: the offered snapshot, the environment check, the parked interval's energy. */
export interface ResumeRequest {
  readonly offered: SnapshotRef;
  readonly env: EnvironmentCheck;
  readonly idle: IdleEnergy;
  readonly atMs: number;
}

/**
 * resumeRun verifies the record from genesis, applies every §13.4 precondition (`RecordClosed`,
 * `PhaseViolation`, `SnapshotMismatch`, `EnvironmentMismatch`) and appends the resumed segment on the
 * head it verified (`StaleHead`/`AppendConflict` when another host got there first). Returns the new head.
 */
export async function resumeRun(store: RecordStore, id: Digest, req: ResumeRequest): Promise<Digest> {
  const record = await readRun(store, id);
  const snap = await checkResume(record, req.offered, req.env);
  return store.appendSegment(id, record.head, resumedSegment(snap, req.atMs, req.idle));
}
