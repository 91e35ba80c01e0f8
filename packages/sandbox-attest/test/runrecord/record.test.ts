import { test } from "node:test";
import assert from "node:assert/strict";
import { blake3, canonicalize, formatDigest, parseDigest, utf8, type Digest } from "@sbx/wire";
import { isSandboxAttestError } from "../../src/errors.ts";
import { RunRecord, runEnergy, runGenesis, type Segment } from "../../src/runrecord/index.ts";
import { close, d, exec, FORK, GRANTS, resume, SNAP, suspend, UNIT, VALID_RUN } from "./fixtures.ts";

// A literal reference of §13.1, written from the formula alone.
function refHeads(unit: Digest, grants: Digest, segs: readonly Segment[]): Digest[] {
  const cat = (...xs: Uint8Array[]) => Uint8Array.from(xs.flatMap((x) => [...x]));
  const heads = [
    formatDigest(blake3(cat(utf8("sandbox.runrecord/1"), parseDigest(unit), parseDigest(grants)))),
  ];
  for (const s of segs)
    heads.push(formatDigest(blake3(cat(parseDigest(heads.at(-1)!), utf8(canonicalize(s))))));
  return heads;
}

function refused(fn: () => unknown, code: string): void {
  assert.throws(fn, (e) => isSandboxAttestError(e) && e.code === code, `want ${code}`);
}

test("genesis and every head match the literal §13.1 formula", () => {
  const r = RunRecord.fromSegments(UNIT, GRANTS, VALID_RUN);
  assert.deepEqual(r.heads, refHeads(UNIT, GRANTS, VALID_RUN));
  assert.equal(r.genesis, runGenesis(UNIT, GRANTS));
  assert.equal(r.phase, "closed");
});

test("genesis binds unit and grant set: different ids, different chains", () => {
  assert.notEqual(runGenesis(UNIT, GRANTS), runGenesis(d("unit-2"), GRANTS));
  assert.notEqual(runGenesis(UNIT, GRANTS), runGenesis(UNIT, d("grants-2")));
  assert.notEqual(runGenesis(UNIT, GRANTS), runGenesis(GRANTS, UNIT));
});

test("stated heads from another unit or grant set are refused (no splicing)", () => {
  const other = RunRecord.fromSegments(d("unit-2"), GRANTS, VALID_RUN);
  refused(() => RunRecord.fromSegments(UNIT, GRANTS, VALID_RUN, other.heads.slice(1)), "HeadMismatch");
  const og = RunRecord.fromSegments(UNIT, d("grants-2"), VALID_RUN);
  refused(() => RunRecord.fromSegments(UNIT, GRANTS, VALID_RUN, og.heads.slice(1)), "HeadMismatch");
});

test("phase rules: execution while parked, double suspend, resume while active", () => {
  refused(() => RunRecord.fromSegments(UNIT, GRANTS, [exec("a"), suspend(1), exec("b")]), "PhaseViolation");
  refused(() => RunRecord.fromSegments(UNIT, GRANTS, [suspend(1), suspend(2)]), "PhaseViolation");
  refused(() => RunRecord.fromSegments(UNIT, GRANTS, [exec("a"), resume(2, "0")]), "PhaseViolation");
});

test("a forked snapshot at resume is SnapshotMismatch", () => {
  refused(
    () => RunRecord.fromSegments(UNIT, GRANTS, [exec("a"), suspend(1), resume(2, "5", FORK)]),
    "SnapshotMismatch",
  );
  const withMemory = { ...SNAP, memory: d("mem") };
  refused(
    () => RunRecord.fromSegments(UNIT, GRANTS, [exec("a"), suspend(1), resume(2, "5", withMemory)]),
    "SnapshotMismatch",
  );
});

test("close is allowed while parked, and nothing may follow it", () => {
  const r = RunRecord.fromSegments(UNIT, GRANTS, [exec("a"), suspend(1), close(2)]);
  assert.equal(r.phase, "closed");
  for (const s of [exec("b"), resume(3, "0"), suspend(3), close(3)])
    refused(() => r.append(s), "RecordClosed");
  assert.equal(r.segments.length, 3, "a refused append changes nothing");
});

test("times may not run backwards", () => {
  refused(() => RunRecord.fromSegments(UNIT, GRANTS, [suspend(10), resume(9, "0")]), "TimeRegression");
});

test("malformed segments are BadSegment", () => {
  const bad: unknown[] = [
    { kind: "executed" },
    { kind: "executed", attestation: "sha256:00" },
    { kind: "executed", attestation: d("x"), extra: 1 },
    { kind: "paused", at_ms: 1 },
    { kind: "suspended", snapshot: { fs_root: d("a") }, at_ms: 1 },
    {
      kind: "resumed",
      snapshot: SNAP,
      at_ms: 2,
      idle_uj: "-1",
      idle_provenance: "measured",
      idle_source: "rapl",
    },
    {
      kind: "resumed",
      snapshot: SNAP,
      at_ms: 2,
      idle_uj: "1",
      idle_provenance: "estimated",
      idle_source: "m",
    },
    { kind: "resumed", snapshot: SNAP, at_ms: 2, idle_uj: "1", idle_provenance: "guessed", idle_source: "m" },
    { kind: "closed", at_ms: 1, outcome: "done" },
    { kind: "closed", at_ms: -1, outcome: "completed" },
  ];
  for (const s of bad)
    refused(() => RunRecord.fromSegments(UNIT, GRANTS, [exec("a"), suspend(1), s]), "BadSegment");
});

test("idle energy accumulates across parks and is reported beside active energy", () => {
  const segs = [
    exec("a"),
    suspend(1),
    resume(2, "100"),
    exec("b"),
    suspend(3),
    resume(4, "250"),
    exec("c"),
    close(5),
  ];
  const r = RunRecord.fromSegments(UNIT, GRANTS, segs);
  const active: Record<string, string> = { [d("a")]: "1000", [d("b")]: "2000", [d("c")]: "3000" };
  const e = runEnergy(r.segments, (att) => active[att] ?? null);
  assert.deepEqual([e.active_uj, e.idle_uj, e.total_uj, e.complete], ["6000", "350", "6350", true]);
  assert.equal(e.idle_by_provenance.estimated, "350");
  const partial = runEnergy(r.segments, (att) => (att === d("a") ? "1000" : null));
  assert.deepEqual([partial.total_uj, partial.complete, partial.unresolved.length], ["1350", false, 2]);
});
