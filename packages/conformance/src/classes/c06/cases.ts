// C6 vectors (§13): valid chains and records broken in systematic ways. Every expected code is
// stated here from the rule the break violates, never obtained by running the implementation on it.
import { addressOf, canonicalize, type Digest, type Json } from "@sbx/wire";
import {
  encodeRecord,
  RunRecord,
  segmentHead,
  type Segment,
  type SnapshotRef,
} from "@sbx/sandbox-attest/runrecord";
import { errCase, okCase } from "../../generate/build.ts";
import type { Vector } from "../../types.ts";

export const C = "C6" as const;
export const id = (s: string): Digest => addressOf({ c6: s });
export const UNIT = id("unit");
export const UNIT2 = id("unit-2");
export const GRANTS = id("grants");
export const GRANTS2 = id("grants-2");
export const T = 1_700_000_000_000;
export const SNAP: SnapshotRef = { fs_root: id("fs-root"), manifest: id("manifest") };
export const SNAP_MEM: SnapshotRef = { ...SNAP, memory: id("memory-image") };
export const FORK: SnapshotRef = { ...SNAP, fs_root: id("fs-root-forked") };

export const exec = (n: number): Segment => ({ kind: "executed", attestation: id(`attestation-${n}`) });
export const suspend = (at: number, snapshot = SNAP): Segment => ({
  kind: "suspended",
  snapshot,
  at_ms: T + at,
});
export const resume = (
  at: number,
  idle: string,
  snapshot = SNAP,
  prov: "measured" | "attributed" | "estimated" = "estimated",
): Segment => ({
  kind: "resumed",
  snapshot,
  at_ms: T + at,
  idle_uj: idle,
  idle_provenance: prov,
  idle_source:
    prov === "measured"
      ? "rapl:package-0"
      : prov === "attributed"
        ? "rapl:package-0×share"
        : "model:ccf-storage",
  ...(prov === "measured"
    ? {}
    : {
        idle_basis:
          prov === "attributed" ? { share: "0.25" } : { wh_per_tb_hour: "1.2", retained_tb: "0.002" },
      }),
});
export const close = (at: number, outcome: "completed" | "abandoned" = "completed"): Segment => ({
  kind: "closed",
  at_ms: T + at,
  outcome,
});

export const FULL = [exec(1), suspend(10), resume(20, "1250000"), exec(2), close(30)];

export function wire(segs: readonly Segment[], unit = UNIT, grants = GRANTS): string {
  return new TextDecoder().decode(encodeRecord(RunRecord.fromSegments(unit, grants, segs)));
}
/** A wire text built line by line with no checks, for records that break a rule. */
export function forge(segs: readonly Segment[], unit = UNIT, grants = GRANTS): string {
  let head = RunRecord.create(unit, grants).genesis;
  const lines = [canonicalize({ format: "sandbox.runrecord/1", grants_id: grants, head, unit_id: unit })];
  segs.forEach((s, i) => {
    head = segmentHead(head, s);
    lines.push(canonicalize({ head, n: i + 1, segment: s }));
  });
  return lines.join("\n") + "\n";
}

export const lines = (t: string): string[] => t.split("\n").slice(0, -1);
export const join = (ls: readonly string[]): string => ls.join("\n") + "\n";
export const verify = (
  cid: string,
  desc: string,
  record: string,
  code: string,
  extra: Record<string, Json> = {},
): Vector => errCase(C, cid, desc, "runrecord.verify", { record, ...extra }, code);

export function validVectors(): Vector[] {
  const ok = (cid: string, desc: string, segs: readonly Segment[]): Vector => {
    const r = RunRecord.fromSegments(UNIT, GRANTS, segs);
    return okCase(
      C,
      cid,
      desc,
      "runrecord.verify",
      { record: wire(segs) },
      {
        genesis: r.genesis,
        head: r.head,
        heads: [...r.heads],
        phase: r.phase,
        segments: segs.length,
        idle_uj: idleSum(segs),
      },
    );
  };
  return [
    okCase(
      C,
      "c6-genesis",
      'head₀ = BLAKE3("sandbox.runrecord/1" ‖ unit_id ‖ grants_id), ids as 32 raw bytes',
      "runrecord.genesis",
      { unit_id: UNIT, grants_id: GRANTS },
      { head: RunRecord.create(UNIT, GRANTS).genesis },
    ),
    ok("c6-valid-empty", "a record with its header only", []),
    ok("c6-valid-full", "execute → suspend → resume → execute → close", FULL),
    ok("c6-valid-active", "execute → suspend → resume → execute, still active", FULL.slice(0, 4)),
    ok("c6-valid-parked", "execute → suspend: the record ends parked", FULL.slice(0, 2)),
    ok("c6-valid-close-parked", "closed while parked: abandonment is an honest outcome", [
      exec(1),
      suspend(10),
      close(20, "abandoned"),
    ]),
    ok("c6-valid-memory-image", "suspend and resume with a retained memory image", [
      exec(1),
      suspend(10, SNAP_MEM),
      resume(20, "9", SNAP_MEM, "measured"),
      exec(2),
    ]),
    ok("c6-valid-two-parks", "two parks, each resumed from its own snapshot", [
      exec(1),
      suspend(10),
      resume(20, "5"),
      exec(2),
      suspend(30, FORK),
      resume(40, "7", FORK),
      close(50),
    ]),
    okCase(
      C,
      "c6-valid-append",
      "append an execution to an active record",
      "runrecord.append",
      { record: wire(FULL.slice(0, 4)), segment: exec(3) as unknown as Json },
      {
        head: RunRecord.fromSegments(UNIT, GRANTS, [...FULL.slice(0, 4), exec(3)]).head,
        record: wire([...FULL.slice(0, 4), exec(3)]),
      },
    ),
  ];
}

export function idleSum(segs: readonly Segment[]): string {
  return String(segs.reduce((s, x) => s + (x.kind === "resumed" ? BigInt(x.idle_uj) : 0n), 0n));
}

export function phaseVectors(): Vector[] {
  const parked = wire([exec(1), suspend(10)]);
  const closed = wire(FULL);
  const app = (cid: string, desc: string, record: string, seg: Segment, code: string): Vector =>
    errCase(C, cid, desc, "runrecord.append", { record, segment: seg as unknown as Json }, code);
  return [
    app("c6-append-exec-while-parked", "execution while parked", parked, exec(2), "PhaseViolation"),
    app(
      "c6-append-suspend-while-parked",
      "a second suspension while parked",
      parked,
      suspend(20),
      "PhaseViolation",
    ),
    app(
      "c6-append-resume-while-active",
      "a resume of a run that is not parked",
      wire([exec(1)]),
      resume(20, "0"),
      "PhaseViolation",
    ),
    app(
      "c6-append-forked-snapshot",
      "resume from a forked snapshot (another fs_root)",
      parked,
      resume(20, "5", FORK),
      "SnapshotMismatch",
    ),
    app(
      "c6-append-forked-memory",
      "resume adding a memory image not recorded at suspension",
      parked,
      resume(20, "5", SNAP_MEM),
      "SnapshotMismatch",
    ),
    app("c6-append-after-close-exec", "append after close: execution", closed, exec(3), "RecordClosed"),
    app(
      "c6-append-after-close-resume",
      "append after close: resume",
      wire([exec(1), suspend(10), close(20)]),
      resume(30, "1"),
      "RecordClosed",
    ),
    app(
      "c6-append-after-close-close",
      "append after close: a second close",
      closed,
      close(40),
      "RecordClosed",
    ),
    app(
      "c6-append-time-regression",
      "a resume stated before its suspension",
      parked,
      resume(5, "1"),
      "TimeRegression",
    ),
    verify(
      "c6-wire-exec-while-parked",
      "a record holding an execution while parked",
      forge([exec(1), suspend(10), exec(2)]),
      "PhaseViolation",
    ),
    verify(
      "c6-wire-forked-snapshot",
      "a record resuming from a forked snapshot, heads consistent",
      forge([exec(1), suspend(10), resume(20, "5", FORK)]),
      "SnapshotMismatch",
    ),
    verify(
      "c6-wire-after-close",
      "a record with a segment after close, heads consistent",
      forge([...FULL, exec(3)]),
      "RecordClosed",
    ),
  ];
}

export function segmentVectors(): Vector[] {
  const bad: [string, Json][] = [
    ["unknown-kind", { kind: "paused", at_ms: T }],
    ["executed-extra-member", { kind: "executed", attestation: id("a"), energy_uj: "5" }],
    ["executed-bad-digest", { kind: "executed", attestation: "sha256:" + "0".repeat(64) }],
    ["suspended-no-manifest", { kind: "suspended", snapshot: { fs_root: SNAP.fs_root }, at_ms: T }],
    ["resumed-idle-number", { ...(resume(20, "1") as unknown as Record<string, Json>), idle_uj: 1 }],
    ["resumed-idle-negative", { ...(resume(20, "1") as unknown as Record<string, Json>), idle_uj: "-1" }],
    [
      "resumed-unknown-provenance",
      { ...(resume(20, "1") as unknown as Record<string, Json>), idle_provenance: "guessed" },
    ],
    [
      "resumed-estimated-no-basis",
      {
        ...(resume(20, "1", SNAP, "measured") as unknown as Record<string, Json>),
        idle_provenance: "estimated",
      },
    ],
    ["closed-bad-outcome", { kind: "closed", at_ms: T, outcome: "done" }],
  ];
  // §13.2: idle_basis values are decimal numerals by syntax (digits, optionally "." and digits);
  // an exponent, a sign, a bare point or a JSON number is refused, as is an empty basis.
  const est = resume(20, "1") as unknown as Record<string, Json>;
  for (const [n, v] of [
    ["exponent", "2e-3"],
    ["negative", "-0.002"],
    ["bare-point", ".5"],
    ["trailing-point", "5."],
    ["json-number", 0.5],
    ["empty-string", ""],
  ] as [string, Json][])
    bad.push([`resumed-basis-${n}`, { ...est, idle_basis: { retained_tb: v } }]);
  bad.push(["resumed-basis-empty", { ...est, idle_basis: {} }]);
  const out = bad.map(([n, seg]) =>
    errCase(
      C,
      `c6-segment-${n}`,
      `malformed segment: ${n}`,
      "runrecord.append",
      { record: wire([exec(1), suspend(10)]), segment: seg },
      "BadSegment",
    ),
  );
  // By syntax: leading and trailing zeros are numerals too ([0-9]+(.[0-9]+)?), kept as written.
  const zeros = {
    ...est,
    idle_basis: { retained_tb: "0002.500", wh_per_tb_hour: "01.2" },
  } as unknown as Segment;
  const segs = [exec(1), suspend(10), zeros];
  out.push(
    okCase(
      C,
      "c6-segment-resumed-basis-zeros",
      "idle_basis numerals with leading and trailing zeros are accepted as written",
      "runrecord.append",
      { record: wire(segs.slice(0, 2)), segment: zeros as unknown as Json },
      { head: RunRecord.fromSegments(UNIT, GRANTS, segs).head, record: wire(segs) },
    ),
  );
  return out;
}
