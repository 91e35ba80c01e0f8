// §13.4 Resumption preconditions: a host resumes only a record that verifies from genesis, is
// parked, offers the snapshot recorded at suspension, and runs in an environment satisfying the
// recorded manifest address.
import type { Amount, Digest } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type { RunRecord } from "./record.ts";
import { snapshotAddress, type Provenance, type ResumedSegment, type SnapshotRef } from "./segment.ts";

/** Decides whether the resuming environment satisfies a manifest, by its address (§14). */
export interface EnvironmentCheck {
  satisfies(manifest: Digest): boolean | Promise<boolean>;
}

/** The idle energy measured or estimated for the parked interval (§13.6). */
export interface IdleEnergy {
  readonly uj: Amount;
  readonly provenance: Provenance;
  readonly source: string;
  readonly basis?: Readonly<Record<string, string>>;
}

/**
 * refuseMoved refuses to continue a record that ends in a hand-off (§13.2a, `RunMoved`, naming where
 * the run went): the store it left never resumes, suspends, closes or appends to it.
 */
export function refuseMoved(record: RunRecord): void {
  if (record.movedTo !== null)
    throw new SandboxAttestError(
      "RunMoved",
      `the run moved to ${JSON.stringify(record.movedTo)} at head ${record.heads[record.heads.length - 2] ?? record.head}: continue it there`,
    );
}

/**
 * checkResume applies the §13.4 preconditions to a record that already verified from genesis (a
 * RunRecord only exists that way): refuses a closed record (`RecordClosed`), one handed off to
 * another store (`RunMoved`), one that is not parked
 * (`PhaseViolation`), an offered snapshot that differs by address from the recorded one
 * (`SnapshotMismatch`), and an environment that does not satisfy the manifest (`EnvironmentMismatch`).
 */
export async function checkResume(
  record: RunRecord,
  offered: SnapshotRef,
  env: EnvironmentCheck,
): Promise<SnapshotRef> {
  if (record.phase === "closed") throw new SandboxAttestError("RecordClosed", "the run is closed");
  refuseMoved(record);
  const parked = record.parkedSnapshot;
  if (parked === null) throw new SandboxAttestError("PhaseViolation", "the run is not parked");
  if (snapshotAddress(offered) !== snapshotAddress(parked))
    throw new SandboxAttestError(
      "SnapshotMismatch",
      `offered ${snapshotAddress(offered)}, recorded ${snapshotAddress(parked)}`,
    );
  if (!(await env.satisfies(parked.manifest)))
    throw new SandboxAttestError(
      "EnvironmentMismatch",
      `environment does not satisfy manifest ${parked.manifest}`,
    );
  return parked;
}

/** resumedSegment builds the resumed segment for a checked snapshot and the parked interval's energy. */
export function resumedSegment(snapshot: SnapshotRef, atMs: number, idle: IdleEnergy): ResumedSegment {
  const seg = {
    kind: "resumed" as const,
    snapshot,
    at_ms: atMs,
    idle_uj: idle.uj,
    idle_provenance: idle.provenance,
    idle_source: idle.source,
  };
  return idle.basis === undefined ? seg : { ...seg, idle_basis: { ...idle.basis } };
}
