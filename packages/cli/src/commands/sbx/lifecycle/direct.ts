// `sbx suspend` and `sbx close` when no supervisor of the run is live on this host (its command
// ended, it was released, it crashed, or the run came from elsewhere): the command takes the run's
// lock and acts on the record itself. Suspending needs the run's last workspace on this host.
import { existsSync } from "node:fs";
import type { Digest } from "@sbx/wire";
import { parseCanonical } from "@sbx/wire";
import { parseUnit } from "@sbx/sandbox-attest/unit";
import { refuseMoved, SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { HostError } from "@sbx/host";
import { snapshotRun, type RunStore } from "@sbx/host/stores";
import { readVerifiedRun, takeRunLock } from "@sbx/host/durable";
import { readInfo, runPaths } from "@sbx/host/durable";
import { closeOutcome } from "@sbx/host/durable";
import { recoverRun } from "./orphan.ts";

async function manifestOf(store: RunStore, unitId: Digest): Promise<Digest> {
  const bytes = await store.getObject(unitId);
  if (bytes === null)
    throw new SandboxAttestError("ObjectMissing", `unit descriptor ${unitId} is not in the store`);
  return parseUnit(parseCanonical(bytes)).manifest;
}

/** suspendDirect (§13) snapshots the run's last workspace on this host and appends the suspended segment. */
export async function suspendDirect(
  store: RunStore,
  id: Digest,
  say: (line: string) => void = () => undefined,
): Promise<Record<string, unknown>> {
  const paths = runPaths(store.root, id);
  const lock = takeRunLock(paths.lock);
  try {
    // §13.7.4 First, the interval of a supervisor that is gone, and the workspace it left.
    await recoverRun(store, id, paths, say);
    const { record } = await readVerifiedRun(store, id);
    if (record.phase === "closed") throw new SandboxAttestError("RecordClosed", "the run is closed");
    refuseMoved(record);
    if (record.phase === "parked")
      throw new SandboxAttestError("PhaseViolation", "the run is parked already");
    const ws = readInfo(paths)?.workspace;
    if (ws === undefined || !existsSync(ws))
      throw new HostError(
        "RunNotLive",
        "this host holds no workspace of the run to snapshot; close it instead",
      );
    const snap = await snapshotRun(store, ws);
    const ref = { fs_root: snap.fs_root, manifest: await manifestOf(store, record.unitId) };
    const head = await store.appendSegment(id, record.head, {
      kind: "suspended",
      snapshot: ref,
      at_ms: Date.now(),
    });
    return { head, fs_root: snap.fs_root, files: snap.files, bytes: snap.bytes, released: true };
  } finally {
    lock.release();
  }
}

/** closeDirect (§13.2) appends the closed segment: the outcome asked for, else derived from the record. */
export async function closeDirect(
  store: RunStore,
  id: Digest,
  asked: string | null,
  say: (line: string) => void = () => undefined,
): Promise<Record<string, unknown>> {
  const paths = runPaths(store.root, id);
  const lock = takeRunLock(paths.lock);
  try {
    await recoverRun(store, id, paths, say); // §13.7.4, §5.3, before anything else
    const vr = await readVerifiedRun(store, id);
    if (vr.record.phase === "closed")
      throw new SandboxAttestError("RecordClosed", "the run is closed already");
    refuseMoved(vr.record);
    const outcome = closeOutcome(asked, vr.record.phase === "parked", vr.lastOutcome);
    const head = await store.appendSegment(id, vr.record.head, {
      kind: "closed",
      at_ms: Date.now(),
      outcome,
    });
    return { head, outcome };
  } finally {
    lock.release();
  }
}
