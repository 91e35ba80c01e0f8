// Shared fixtures for the run record tests: fixed ids, snapshots and a five-segment valid run.
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import type { Segment, SnapshotRef } from "../../src/runrecord/index.ts";

export const d = (s: string): Digest => digestBytes(utf8(s));
export const UNIT = d("unit-1");
export const GRANTS = d("grants-1");
export const SNAP: SnapshotRef = { fs_root: d("fs-root"), manifest: d("manifest") };
export const FORK: SnapshotRef = { fs_root: d("fs-root-forked"), manifest: d("manifest") };

export const exec = (name: string): Segment => ({ kind: "executed", attestation: d(name) });
export const suspend = (at: number, snapshot: SnapshotRef = SNAP): Segment => ({
  kind: "suspended",
  snapshot,
  at_ms: at,
});
export const resume = (at: number, idle: string, snapshot: SnapshotRef = SNAP): Segment => ({
  kind: "resumed",
  snapshot,
  at_ms: at,
  idle_uj: idle,
  idle_provenance: "estimated",
  idle_source: "model:storage-residency",
  idle_basis: { w_per_tb: "1.2" },
});
export const close = (at: number): Segment => ({ kind: "closed", at_ms: at, outcome: "completed" });

/** execute → suspend → resume → execute → close. */
export const VALID_RUN: readonly Segment[] = [
  exec("att-1"),
  suspend(1000),
  resume(5000, "1250000"),
  exec("att-2"),
  close(9000),
];
