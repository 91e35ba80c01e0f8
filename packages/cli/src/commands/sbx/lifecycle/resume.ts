// `sbx resume` where no sandbox of the run is resident on this host (it was released, its
// supervisor died, or the run came from another host or store): §13.4 in order — the record
// verified from genesis (every attestation and the receipt chain), the run parked, this host's
// environment checked against the manifest, the snapshot restored object by object into a fresh
// workspace and re-addressed (what is offered is what was restored: any tampered, missing or
// malformed object is SnapshotMismatch), the idle energy of the stored snapshot estimated, the
// resumed segment appended by compare-and-append; only then a fresh sandbox starts the command.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseCanonical, type Digest, type KeyPair } from "@sbx/wire";
import { parseUnit, type UnitDescriptor } from "@sbx/sandbox-attest/unit";
import {
  isSandboxAttestError,
  refuseMoved,
  SandboxAttestError,
  type SnapshotRef,
} from "@sbx/sandbox-attest/runrecord";
import { resumeRun } from "@sbx/sandbox-attest/store";
import { faultPoint } from "@sbx/host/store";
import { restoreRun, snapshotRun, type RunStore } from "@sbx/host/stores";
import { checkEnvironment, hostOffer, idleEnergy, readVerifiedRun, takeRunLock } from "@sbx/host/durable";
import type { SandboxOptions } from "@sbx/host/sandbox";
import { writeBytes, type Io } from "../../../command.ts";
import { runPaths, writeInfo, type RunKeyRef } from "@sbx/host/durable";
import { asDetachedChild, notifyDetached } from "./detach.ts";
import { Supervisor, type SupervisorEnd } from "@sbx/host/durable";
import { durableImageSandbox, pinnedImageOf } from "./image.ts";
import { policyOfRun } from "@sbx/host/durable";
import { grantOfRun, type ResumeGrant } from "./granted-resume.ts";
import { recoverRun } from "./orphan.ts";

const SNAPSHOT_CODES = new Set(["ObjectMismatch", "ObjectMissing", "BadFsTree"]);

async function readUnit(store: RunStore, id: Digest): Promise<UnitDescriptor> {
  const bytes = await store.getObject(id);
  if (bytes === null)
    throw new SandboxAttestError("ObjectMissing", `unit descriptor ${id} is not in the store`);
  return parseUnit(parseCanonical(bytes));
}

/** restoreOffered restores the parked snapshot and returns what was restored, re-addressed. */
async function restoreOffered(
  store: RunStore,
  ref: SnapshotRef,
  ws: string,
): Promise<{ offered: SnapshotRef; bytes: bigint }> {
  try {
    await restoreRun(store, ref.fs_root, ws);
  } catch (e) {
    if (isSandboxAttestError(e) && SNAPSHOT_CODES.has(e.code))
      throw new SandboxAttestError(
        "SnapshotMismatch",
        `the stored snapshot ${ref.fs_root} cannot be offered: ${e.message}`,
        { cause: e },
      );
    throw e;
  }
  faultPoint("durable:restored");
  const again = await snapshotRun(store, ws);
  return { offered: { fs_root: again.fs_root, manifest: ref.manifest }, bytes: BigInt(again.bytes) };
}

/** What a restoring resume needs besides the store and the run. */
export interface RestoreInput {
  readonly store: RunStore;
  readonly id: Digest;
  readonly hostKey: KeyPair;
  /** Where hostKey came from: remembered for the run's later commands on this host (runkey.ts). */
  readonly keyRef: RunKeyRef;
  readonly cmd: readonly string[];
  readonly sandbox: Omit<SandboxOptions, "workspace">;
  readonly workspace?: string;
  /** §14.9.7 The image store holding the image the run's manifest pins (`--images`). */
  readonly images?: string;
  /** sbx resume's grant options (--trust, --ledger, …), for a run under grants (granted-resume.ts). */
  readonly grantValues?: Readonly<Record<string, unknown>>;
}

/**
 * resumeByRestore: see the file comment. Resolves once the resumed sandbox's supervisor ends; in a
 * detached child, a refusal before the run goes is told to the parent with its code (detach.ts).
 */
export function resumeByRestore(r: RestoreInput, io: Io): Promise<SupervisorEnd> {
  return asDetachedChild(() => restoreAndSupervise(r, io));
}

async function restoreAndSupervise(r: RestoreInput, io: Io): Promise<SupervisorEnd> {
  const paths = runPaths(r.store.root, r.id);
  const lock = takeRunLock(paths.lock);
  let ws: string | null = null;
  let appended = false;
  let granted: ResumeGrant | null = null;
  try {
    // §13.7.4 First, the interval of a supervisor that is gone (recorded before anything else), and
    // the workspace its sandbox left on its image (§5.3), before the info names another.
    await recoverRun(r.store, r.id, paths, (l) => io.err(`sbx: ${l}`));
    const vr = await readVerifiedRun(r.store, r.id);
    const rec = vr.record;
    if (rec.phase === "closed") throw new SandboxAttestError("RecordClosed", "the run is closed");
    refuseMoved(rec);
    const ref = rec.parkedSnapshot;
    if (ref === null) throw new SandboxAttestError("PhaseViolation", "the run is not parked");
    const sat = await checkEnvironment(r.store, ref.manifest, hostOffer(r.store.root));
    if (!sat.ok)
      throw new SandboxAttestError(
        "EnvironmentMismatch",
        `this host does not satisfy manifest ${ref.manifest}: ${sat.code} ${JSON.stringify(sat.mismatches)}`,
      );
    // §13.4, §14.9.7 The pinned image, checked by its bytes before anything is restored.
    const sandbox = await durableImageSandbox(r.store, ref.manifest, r.images, r.sandbox, true);
    const unit = await readUnit(r.store, rec.unitId);
    // §5.5.5: the run's exec policy gates the resumed sandbox too, or the resume is refused.
    const gated = await policyOfRun(r.store, unit, vr);
    ws = r.workspace ?? join(mkdtempSync(join(tmpdir(), "sbx-resume-")), "work");
    const { offered, bytes } = await restoreOffered(r.store, ref, ws);
    // jcp §4.5, §4.7: a run under grants resumes only under its grant in force (granted-resume.ts).
    granted = await grantOfRun({ ...r, sandbox }, unit, rec, ws, (l) => io.err(`sbx: ${l}`));
    writeInfo(paths, { workspace: ws, key: r.keyRef });
    const last = rec.segments[rec.segments.length - 1];
    const parkedAt = last?.kind === "suspended" ? last.at_ms : Date.now();
    const atMs = Math.max(Date.now(), parkedAt);
    const idle = idleEnergy({ parkedMs: atMs - parkedAt, residentBytes: 0n, snapshotBytes: bytes });
    const head = await resumeRun(r.store, r.id, { offered, env: { satisfies: () => sat.ok }, idle, atMs });
    appended = true;
    faultPoint("durable:resumed-appended");
    await granted?.governance.resumed(head, BigInt(idle.uj));
    io.err(
      `sbx: resumed ${r.id} from snapshot ${ref.fs_root} into ${ws}; idle ${idle.uj} µJ estimated (${idle.source})`,
    );
    const argv = r.cmd.length > 0 ? r.cmd : (unit.argv ?? []);
    const sup = await Supervisor.start({
      store: r.store,
      id: r.id,
      head,
      argv,
      unit,
      unitId: rec.unitId,
      grantsId: rec.grantsId,
      manifest: unit.manifest,
      pinnedImage: await pinnedImageOf(r.store, unit.manifest),
      policy: gated.policy,
      ...(gated.execPolicy !== undefined ? { execPolicy: gated.execPolicy } : {}),
      hostKey: r.hostKey,
      sandbox: granted?.sandbox ?? { ...sandbox, workspace: ws },
      chain: vr.chain,
      paths,
      lock,
      onOutput: (s, data) => writeBytes(io, s === "stdout" ? "out" : "err", data),
      say: (l) => io.err(`sbx: ${l}`),
      ...(granted ? { governance: granted.governance } : {}),
    });
    io.out(`run ${r.id}`);
    notifyDetached(r.id);
    const end = await sup.ended;
    await granted?.close();
    return end;
  } catch (e) {
    lock.release();
    await granted?.close();
    // Before the append nothing is recorded, so the restored tree goes; after it, it is the run's.
    if (!appended && ws !== null && r.workspace === undefined)
      rmSync(join(ws, ".."), { recursive: true, force: true });
    throw e;
  }
}
