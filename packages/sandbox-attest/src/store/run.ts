// §13.4 Operations on a run kept in a Store: read it verified from genesis, and resume it only when
// every precondition holds, appending the resumed segment by compare-and-append.
import type { Digest } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { RunRecord } from "../runrecord/record.ts";
import { checkResume, resumedSegment, type EnvironmentCheck, type IdleEnergy } from "../runrecord/resume.ts";
import type { SnapshotRef } from "../runrecord/segment.ts";
import { decodeRecord } from "../runrecord/wire.ts";
import type { RecordStore } from "./types.ts";

/**
 * readRun reads a record from a store and verifies it from genesis, decoding it once (through the
 * store's readRecord where it has one); `RecordMissing` when absent, `GenesisMismatch` when stored
 * under another id.
 */
export async function readRun(store: RecordStore, id: Digest): Promise<RunRecord> {
  const record = await readDecoded(store, id);
  if (record === null) throw new SandboxAttestError("RecordMissing", `no record ${id}`);
  if (record.genesis !== id)
    throw new SandboxAttestError("GenesisMismatch", `record stored as ${id} has genesis ${record.genesis}`);
  return record;
}

async function readDecoded(store: RecordStore, id: Digest): Promise<RunRecord | null> {
  if (store.readRecord !== undefined) return store.readRecord(id);
  const bytes = await store.readRecordBytes(id);
  return bytes === null ? null : decodeRecord(bytes).record;
}

/** What resuming a run needs: the offered snapshot, the environment check, the parked interval's energy. */
export interface ResumeRequest {
  readonly offered: SnapshotRef;
  readonly env: EnvironmentCheck;
  readonly idle: IdleEnergy;
  readonly atMs: number;
}

/**
 * resumeRun verifies the record from genesis (decoded once: the append continues from that state in
 * a store that keeps it), applies every §13.4 precondition (`RecordClosed`,
 * `PhaseViolation`, `SnapshotMismatch`, `EnvironmentMismatch`) and appends the resumed segment on the
 * head it verified (`StaleHead`/`AppendConflict` when another host got there first). Returns the new head.
 */
export async function resumeRun(store: RecordStore, id: Digest, req: ResumeRequest): Promise<Digest> {
  const record = await readRun(store, id);
  const snap = await checkResume(record, req.offered, req.env);
  return store.appendSegment(id, record.head, resumedSegment(snap, req.atMs, req.idle));
}
