// `sbx export RUN --move TO`: the run's record in this store is ended by a signed hand-off
// (sandbox-attest §13.2a), so this store refuses to continue it (`RunMoved`), and the archive then
// written carries the record at the head handed off. Under the run's lock, on a parked run only.
import type { Digest } from "@sbx/wire";
import { SandboxAttestError, signHandoff } from "@sbx/sandbox-attest/runrecord";
import { readVerifiedRun, takeRunLock } from "@sbx/host/durable";
import type { RunStore } from "@sbx/host/stores";
import { runPaths } from "@sbx/host/durable";
import { runKeyOf } from "./runkey.ts";

/** What a hand-off appended: where the run went, the head handed off, the new head, the signer. */
export interface HandedOff {
  readonly to: string;
  readonly handed: Digest;
  readonly head: Digest;
  readonly signer: string;
}

/**
 * handOffRun appends the signed `moved` segment to run `id` (§13.2a), signed with the key the run
 * signs with on this host (runKeyOf). Refuses a run a live supervisor holds (`RunBusy`), a closed
 * run (`RecordClosed`), one moved already (`RunMoved`) and one that is not parked (`PhaseViolation`).
 */
export async function handOffRun(
  store: RunStore,
  id: Digest,
  to: string,
  keyFile: string | undefined,
  say: (l: string) => void,
): Promise<HandedOff> {
  const paths = runPaths(store.root, id);
  const lock = takeRunLock(paths.lock);
  try {
    const { record } = await readVerifiedRun(store, id);
    if (record.phase === "closed") throw new SandboxAttestError("RecordClosed", "the run is closed");
    if (record.movedTo !== null)
      throw new SandboxAttestError("RunMoved", `the run moved to ${JSON.stringify(record.movedTo)} already`);
    if (record.phase !== "parked")
      throw new SandboxAttestError("PhaseViolation", "only a parked run is handed off: sbx suspend it first");
    const { key } = runKeyOf(store.root, paths, id, keyFile, say);
    const seg = signHandoff(key, record.head, to, Math.max(Date.now(), lastTime(record.segments)));
    const head = await store.appendSegment(id, record.head, seg);
    return { to, handed: record.head, head, signer: key.did };
  } finally {
    lock.release();
  }
}

// The latest stated time of the record, so a hand-off is never timed before it (§13.3 rule 5).
function lastTime(segments: readonly { readonly kind: string; readonly at_ms?: number }[]): number {
  let t = 0;
  for (const s of segments) if (s.at_ms !== undefined && s.at_ms > t) t = s.at_ms;
  return t;
}
