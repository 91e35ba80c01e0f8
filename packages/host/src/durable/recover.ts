// §13.7.4 A run whose supervisor died: its sandbox outlived it (the processes still in the run's
// cgroup), and the interval it had open may be unrecorded. `sbx suspend`, `sbx close` and
// `sbx resume` call recoverRun first, under the run's lock and before anything else: it ends
// what is left in the cgroup and, when the record's head is still the head the interval opened on
// (nothing recorded it), attests the interval from the cgroup's own counters as a recovered one —
// outcome `signaled` SIGKILL with `stopped: "SupervisorLost"`, energy `estimated` (ccf models from
// the cgroup's CPU time and memory, sources `recovered:…`), no journal events — and appends it as
// the executed segment. Once recorded, the interval's file goes, so it is attested exactly once.
// recoverRun then writes back the workspace that sandbox left on its image (§5.3). The interval is
// sealed by the code a live interval is (seal.ts); the key it is signed with is the caller's to
// choose (the CLI's lifecycle/runkey.ts), asked for only once there is an interval to sign.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseCanonical, parseDigest, toHex, type Digest, type KeyPair } from "@sbx/wire";
import type { Outcome } from "@sbx/sandbox-attest/attestation";
import { Journal } from "@sbx/sandbox-attest/journal";
import { parseUnit } from "@sbx/sandbox-attest/unit";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { recoverWorkspace } from "../sandbox/disk.ts";
import { faultPoint } from "../store/index.ts";
import type { RunStore } from "../stores/index.ts";
import { EXEC_POLICY_LABEL } from "./cited.ts";
import { NO_MANIFEST } from "./environment.ts";
import { keepJournal } from "./journal.ts";
import {
  dropOpenInterval,
  endOrphan,
  readOpenInterval,
  removeOrphanCgroups,
  supervisorGone,
  SUPERVISOR_LOST,
  type OpenInterval,
} from "./orphan.ts";
import { readInfo, type RunPaths } from "./paths.ts";
import { readVerifiedRun } from "./record.ts";
import { sealInterval } from "./seal.ts";

/** orphanOf: the open interval of a supervisor that is gone, or null (none, or its supervisor lives). */
export function orphanOf(paths: RunPaths): OpenInterval | null {
  const o = readOpenInterval(paths.interval);
  return o !== null && supervisorGone(o) ? o : null;
}

/** What recoverOrphan did: nothing (null), or the supervisor it found gone and what it recorded. */
export interface Recovered {
  readonly supervisor: number;
  /** The executed segment's attestation, or null when the interval was recorded already. */
  readonly attestation: Digest | null;
  readonly total_uj: string | null;
  readonly head: Digest;
}

/**
 * recoverRun (§13.7.4, §5.3) is what `sbx suspend`, `close` and `resume` do first, under the run's
 * lock: the interval of a supervisor that is gone (recoverOrphan), then the workspace that
 * supervisor's sandbox left on its image, written back (recoverWorkspace), before anything (a
 * resume into another workspace included) makes the run's info name another workspace.
 */
export async function recoverRun(
  store: RunStore,
  id: Digest,
  paths: RunPaths,
  keyOf: () => KeyPair,
  say: (line: string) => void,
): Promise<Recovered | null> {
  const r = await recoverOrphan(store, id, paths, keyOf, say);
  const ws = readInfo(paths)?.workspace;
  if (ws !== undefined && existsSync(ws)) recoverWorkspace(ws);
  return r;
}

/**
 * recoverOrphan: see the file comment. The caller holds the run's lock. `keyOf` gives the key the
 * recovered interval is signed with; it is called only when there is one to sign, after the unit
 * is read.
 */
export async function recoverOrphan(
  store: RunStore,
  id: Digest,
  paths: RunPaths,
  keyOf: () => KeyPair,
  say: (line: string) => void,
): Promise<Recovered | null> {
  const o = orphanOf(paths);
  if (o === null) return null;
  const vr = await readVerifiedRun(store, id);
  const reading = await endOrphan(o);
  const rec = vr.record;
  if (rec.head !== o.head || rec.phase !== "active") {
    removeOrphanCgroups(o);
    dropOpenInterval(paths.interval);
    say(
      `the run's supervisor (pid ${String(o.pid)}) is gone; its interval was recorded; what it left running was ended`,
    );
    return { supervisor: o.pid, attestation: null, total_uj: null, head: rec.head };
  }
  const bytes = await store.getObject(rec.unitId);
  if (bytes === null)
    throw new SandboxAttestError("ObjectMissing", `unit descriptor ${rec.unitId} is not in the store`);
  const unit = parseUnit(parseCanonical(bytes));
  const key = keyOf();
  const journal = new Journal();
  const outcome: Outcome = { status: "signaled", signal: "SIGKILL", stopped: SUPERVISOR_LOST };
  // Metered and attested, not journaled: the journal of the interval died with its supervisor.
  const { receipt, attestation, address } = sealInterval({
    chain: vr.chain,
    reading,
    hostKey: key,
    unit,
    unitId: rec.unitId,
    grantsId: rec.grantsId,
    manifest: unit.manifest,
    execPolicy: (unit.labels?.[EXEC_POLICY_LABEL] as Digest | undefined) ?? vr.policy ?? NO_MANIFEST,
    journal,
    outcome,
    provided: { journaled: false, snapshots: false, processControl: false },
    runHead: o.head,
  });
  await keepJournal(store, journal.events);
  await store.putSigned(receipt.envelope);
  await store.putSigned(attestation);
  faultPoint("durable:recovered-stored");
  const head = await store.appendSegment(id, rec.head, { kind: "executed", attestation: address });
  faultPoint("durable:recovered-appended"); // the file still names the old head: not attested again
  // The cgroups first: the file names them (and holds nothing once the head has moved) until both go.
  removeOrphanCgroups(o);
  dropOpenInterval(paths.interval);
  const from = reading.components.some((c) => c.source === "recovered:cgroup.cpu")
    ? "the cgroup's counters"
    : "the supervisor's last reading (the cgroup was gone)";
  say(
    `the run's supervisor (pid ${String(o.pid)}) is gone: its interval ${new Date(reading.start_ms).toISOString()}…${new Date(reading.end_ms).toISOString()} was recovered from ${from} and attested as ${address} (${receipt.receipt.total_uj} µJ estimated, stopped ${SUPERVISOR_LOST})`,
  );
  return { supervisor: o.pid, attestation: address, total_uj: receipt.receipt.total_uj, head };
}

/** What `sbx runs` and `sbx show` say of a run's supervisor on this host. */
export interface SupervisorState {
  /** live: an interval is open under a live supervisor; gone: its supervisor died. */
  readonly state: "live" | "gone";
  readonly pid: number;
  /** The record's head is still the one the interval opened on: the interval is not recorded yet. */
  readonly unrecorded: boolean;
}

/**
 * supervisorState reads the run's open-interval file in the file store at `storeRoot` (creating
 * nothing): null when there is none; an unreadable one is said as gone, so it is never hidden.
 */
export function supervisorState(storeRoot: string, id: Digest, head: Digest | null): SupervisorState | null {
  const file = join(storeRoot, "live", `${toHex(parseDigest(id))}.interval.json`);
  let o: OpenInterval | null;
  try {
    o = readOpenInterval(file);
  } catch {
    return { state: "gone", pid: 0, unrecorded: true };
  }
  if (o === null) return null;
  return { state: supervisorGone(o) ? "gone" : "live", pid: o.pid, unrecorded: o.head === head };
}

/** supervisorText: the line `sbx runs` and `sbx show` print for a supervisor that is gone. */
export function supervisorText(s: SupervisorState | null): string | null {
  if (s === null || s.state !== "gone") return null;
  return `supervisor gone (pid ${String(s.pid)})${s.unrecorded ? ": its interval is not recorded yet; sbx suspend, close or resume attests it (recovered) first" : ": what it left running is ended by the next sbx suspend, close or resume"}`;
}
