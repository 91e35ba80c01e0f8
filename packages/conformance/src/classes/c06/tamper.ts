// C6 vectors for the wire form (§13.5), splicing (§13.1), resumption (§13.4), energy (§13.6) and the
// filesystem DAG (§13.8). Breaks are systematic; each expected code follows from the rule broken.
import { addressOf, canonicalize, type Json, type JsonObject } from "@sbx/wire";
import { RunRecord } from "@sbx/sandbox-attest/runrecord";
import { errCase, okCase } from "../../generate/build.ts";
import type { Vector } from "../../types.ts";
import { fsTreeOutputOracle } from "../../oracle/fstree.ts";
import {
  C,
  close,
  exec,
  forge,
  FORK,
  FULL,
  GRANTS,
  GRANTS2,
  id,
  join,
  lines,
  resume,
  SNAP,
  suspend,
  T,
  UNIT,
  UNIT2,
  verify,
  wire,
} from "./cases.ts";

const flipHex = (s: string, at: number): string =>
  s.slice(0, at) + (s[at] === "0" ? "1" : "0") + s.slice(at + 1);

export function wireVectors(): Vector[] {
  const full = wire(FULL);
  const ls = lines(full);
  const out: Vector[] = [];
  // §13.5 order within a line: the segment's form, then the §13.3 phase and time rules, and only
  // then the stated head. Each case changes a segment and keeps the line's old head, so both the
  // segment's rule and HeadMismatch apply.
  const swap = (i: number, seg: JsonObject): string =>
    join(ls.map((x, j) => (j === i ? canonicalize({ ...(JSON.parse(x) as JsonObject), segment: seg }) : x)));
  const segOf = (i: number) => (JSON.parse(ls[i]!) as { segment: JsonObject }).segment;
  out.push(
    verify(
      "c6-order-segment-before-head",
      "line 2's segment of an unknown kind, its stated head kept: BadSegment before HeadMismatch",
      swap(2, { ...segOf(2), kind: "bogus" }),
      "BadSegment",
    ),
    verify(
      "c6-order-phase-before-head",
      "line 1 a resumed segment while active, its stated head kept: PhaseViolation before HeadMismatch",
      swap(1, segOf(3)),
      "PhaseViolation",
    ),
    verify(
      "c6-order-time-before-head",
      "line 3 resumed before it was suspended, its stated head kept: TimeRegression before HeadMismatch",
      swap(3, { ...segOf(3), at_ms: 1 }),
      "TimeRegression",
    ),
  );
  // every stated head (header and each line), one hex digit changed
  ls.forEach((l, i) => {
    const at = l.indexOf('"head":"blake3:') + 15;
    out.push(
      verify(
        `c6-wire-head-flipped-line-${i + 1}`,
        `line ${i + 1}: one hex digit of the stated head changed`,
        join(ls.map((x, j) => (j === i ? flipHex(l, at) : x))),
        i === 0 ? "GenesisMismatch" : "HeadMismatch",
      ),
    );
  });
  const susp = ls[2]!;
  const root = SNAP.fs_root.slice(7);
  out.push(
    verify(
      "c6-wire-modified-snapshot",
      "the recorded snapshot's fs_root changed in the suspended line",
      join(ls.map((x, j) => (j === 2 ? x.replace(root, id("other-root").slice(7)) : x))),
      "HeadMismatch",
    ),
    verify(
      "c6-wire-modified-snapshot-both",
      "the recorded snapshot changed consistently in the suspended and resumed lines",
      join(ls.map((x, j) => (j === 2 || j === 3 ? x.replaceAll(root, id("other-root").slice(7)) : x))),
      "HeadMismatch",
    ),
    verify(
      "c6-wire-modified-idle",
      "idle_uj changed in the resumed line",
      join(ls.map((x, j) => (j === 3 ? x.replace('"idle_uj":"1250000"', '"idle_uj":"125000"') : x))),
      "HeadMismatch",
    ),
    verify(
      "c6-wire-dropped-line",
      "a segment line removed from the middle",
      join(ls.filter((_, j) => j !== 2)),
      "BadRecord",
    ),
    verify(
      "c6-wire-swapped-lines",
      "two segment lines swapped",
      join([ls[0]!, ls[1]!, ls[3]!, ls[2]!, ls[4]!, ls[5]!]),
      "BadRecord",
    ),
    verify(
      "c6-wire-duplicated-line",
      "a segment line repeated",
      join([...ls.slice(0, 3), susp, ...ls.slice(3)]),
      "BadRecord",
    ),
    verify(
      "c6-wire-torn-tail",
      "the last line cut in the middle (a torn append)",
      full.slice(0, full.length - 40),
      "TornRecord",
    ),
    verify(
      "c6-wire-no-final-newline",
      "the last line without its line feed",
      full.slice(0, -1),
      "TornRecord",
    ),
    verify(
      "c6-wire-whitespace",
      "a line that is not canonical JSON (a space after a colon)",
      full.replace('"n":1,', '"n": 1,'),
      "BadRecord",
    ),
    verify("c6-wire-crlf", "CRLF line ends", full.replaceAll("\n", "\r\n"), "BadRecord"),
    verify("c6-wire-empty", "an empty file", "", "BadRecord"),
    // §13.3 item 5: an executed segment carries no time; at_ms is compared across it.
    verify(
      "c6-time-across-executed",
      "closed before the resume it follows, with an executed segment between: TimeRegression",
      forge([exec(1), suspend(10), resume(20, "1"), exec(2), close(15)]),
      "TimeRegression",
    ),
    // §13.5: a file with no line feed at all holds only bytes after the last (absent) line feed.
    verify(
      "c6-wire-header-no-newline",
      "the header line alone, without its line feed: TornRecord",
      ls[0]!,
      "TornRecord",
    ),
    verify(
      "c6-wire-header-torn",
      "half a header line and no line feed: TornRecord, not BadRecord",
      ls[0]!.slice(0, 20),
      "TornRecord",
    ),
    verify(
      "c6-wire-header-format",
      "an unknown format name in the header",
      full.replace("sandbox.runrecord/1", "sandbox.runrecord/2"),
      "BadRecord",
    ),
    verify(
      "c6-wire-cut-at-boundary",
      "a record cut back at a line boundary, caught by the expected head",
      join(ls.slice(0, 4)),
      "HeadMismatch",
      { expect_head: RunRecord.fromSegments(UNIT, GRANTS, FULL).head },
    ),
  );
  return out;
}

/**
 * Stated heads that differ from the recomputed ones (§13.5), in every op that reads a record: a line
 * stating a real head of this chain but not its own, and the head a holder states for the whole
 * record (`expect_head`) when the record verifies but ends elsewhere. Each stated head is a real
 * head (of this chain or another), so only the comparison with the recomputed one can refuse it.
 */
export function statedHeadVectors(): Vector[] {
  const full = wire(FULL);
  const ls = lines(full);
  const headOf = (l: string) => (JSON.parse(l) as { head: string }).head;
  const heads = ls.map(headOf);
  const statesHead = (i: number, h: string): string =>
    join(ls.map((x, j) => (j === i ? x.replace(`"head":"${heads[i]!}"`, `"head":"${h}"`) : x)));
  const lastFlipped = statesHead(ls.length - 1, heads[ls.length - 2]!);
  const parked = lines(wire([exec(1), suspend(10)]));
  const parkedFlipped = join([
    parked[0]!,
    parked[1]!,
    parked[2]!.replace(headOf(parked[2]!), headOf(parked[1]!)),
  ]);
  const other = lines(wire(FULL, UNIT2, GRANTS)).map(headOf);
  const idle = { uj: "1", provenance: "estimated", source: "model:ccf-storage" };
  return [
    verify(
      "c6-stated-head-previous",
      "line 3 states line 2's head, a real head of this chain",
      statesHead(3, heads[2]!),
      "HeadMismatch",
    ),
    verify("c6-stated-head-genesis", "line 1 states head₀", statesHead(1, heads[0]!), "HeadMismatch"),
    verify("c6-stated-head-last", "the last line states the head before it", lastFlipped, "HeadMismatch"),
    verify(
      "c6-expect-head-earlier",
      "a whole record, the holder stating the head one line back",
      full,
      "HeadMismatch",
      { expect_head: heads[ls.length - 2]! },
    ),
    verify(
      "c6-expect-head-other-unit",
      "the holder stating the head of the same segments under another unit",
      full,
      "HeadMismatch",
      { expect_head: other[other.length - 1]! },
    ),
    verify(
      "c6-expect-head-genesis",
      "the holder stating head₀ for a record with segments",
      full,
      "HeadMismatch",
      { expect_head: heads[0]! },
    ),
    errCase(
      C,
      "c6-append-stated-head",
      "an append to a record whose last line's stated head is not its own",
      "runrecord.append",
      { record: lastFlipped, segment: exec(9) as unknown as Json },
      "HeadMismatch",
    ),
    errCase(
      C,
      "c6-resume-stated-head",
      "a resume of a record whose suspended line states the head before it",
      "runrecord.resume",
      {
        record: parkedFlipped,
        offered: SNAP as unknown as Json,
        environment_satisfies: true,
        at_ms: T + 20,
        idle,
      },
      "HeadMismatch",
    ),
    errCase(
      C,
      "c6-energy-stated-head",
      "the energy of a record whose last line's stated head is not its own",
      "runrecord.energy",
      { record: lastFlipped, active_uj: {} },
      "HeadMismatch",
    ),
  ];
}

export function spliceVectors(): Vector[] {
  const mine = lines(wire(FULL));
  const otherUnit = lines(wire(FULL, UNIT2, GRANTS));
  const otherGrants = lines(wire(FULL, UNIT, GRANTS2));
  return [
    verify(
      "c6-splice-unit-header",
      "a record of another unit offered for this one",
      wire(FULL, UNIT2, GRANTS),
      "GenesisMismatch",
      { unit_id: UNIT, grants_id: GRANTS },
    ),
    verify(
      "c6-splice-grants-header",
      "a record under another grant set offered for this run",
      wire(FULL, UNIT, GRANTS2),
      "GenesisMismatch",
      { unit_id: UNIT, grants_id: GRANTS },
    ),
    verify(
      "c6-splice-unit-tail",
      "this run's first segments, then another unit's",
      join([...mine.slice(0, 3), ...otherUnit.slice(3)]),
      "HeadMismatch",
    ),
    verify(
      "c6-splice-grants-tail",
      "this run's first segments, then another grant set's",
      join([...mine.slice(0, 3), ...otherGrants.slice(3)]),
      "HeadMismatch",
    ),
    verify(
      "c6-splice-header-swap",
      "another unit's header on this run's segments",
      join([otherUnit[0]!, ...mine.slice(1)]),
      "HeadMismatch",
    ),
    verify(
      "c6-splice-header-ids-edited",
      "the header's unit_id edited, head₀ kept",
      mine[0]!.replace(UNIT, UNIT2) + "\n" + join(mine.slice(1)),
      "GenesisMismatch",
    ),
  ];
}

export function resumeVectors(): Vector[] {
  const parked = wire([exec(1), suspend(10)]);
  const idle = {
    uj: "3600000",
    provenance: "estimated",
    source: "model:ccf-storage",
    basis: { wh_per_tb_hour: "1.2" },
  };
  const seg = resume(20, "3600000");
  const input = (record: string, offered: Json, sat = true): Json => ({
    record,
    offered,
    environment_satisfies: sat,
    at_ms: T + 20,
    idle: { ...idle, source: "model:ccf-storage" },
  });
  const expectSeg = {
    ...(seg as unknown as Record<string, Json>),
    idle_source: "model:ccf-storage",
    idle_basis: { wh_per_tb_hour: "1.2" },
  };
  return [
    okCase(
      C,
      "c6-resume-ok",
      "every precondition holds; the resumed segment records the snapshot and idle energy",
      "runrecord.resume",
      input(parked, SNAP as unknown as Json),
      {
        segment: expectSeg,
        head: RunRecord.fromSegments(UNIT, GRANTS, [exec(1), suspend(10), expectSeg]).head,
      },
    ),
    errCase(
      C,
      "c6-resume-forked",
      "the offered snapshot differs from the recorded one",
      "runrecord.resume",
      input(parked, FORK as unknown as Json),
      "SnapshotMismatch",
    ),
    errCase(
      C,
      "c6-resume-environment",
      "the environment does not satisfy the recorded manifest",
      "runrecord.resume",
      input(parked, SNAP as unknown as Json, false),
      "EnvironmentMismatch",
    ),
    errCase(
      C,
      "c6-resume-not-parked",
      "a resume of an active run",
      "runrecord.resume",
      input(wire([exec(1)]), SNAP as unknown as Json),
      "PhaseViolation",
    ),
    errCase(
      C,
      "c6-resume-closed",
      "a resume of a run closed while parked",
      "runrecord.resume",
      input(wire([exec(1), suspend(10), close(15)]), SNAP as unknown as Json),
      "RecordClosed",
    ),
    // §13.4: the four preconditions first, then the resumed segment is checked as any append.
    errCase(
      C,
      "c6-resume-before-suspension",
      "a resume timed before the suspension: TimeRegression, checked as any append",
      "runrecord.resume",
      { ...(input(parked, SNAP as unknown as Json) as JsonObject), at_ms: T + 5 },
      "TimeRegression",
    ),
    errCase(
      C,
      "c6-resume-forked-and-early",
      "a forked snapshot offered at a time before the suspension: SnapshotMismatch, a precondition first",
      "runrecord.resume",
      { ...(input(parked, FORK as unknown as Json) as JsonObject), at_ms: T + 5 },
      "SnapshotMismatch",
    ),
    errCase(
      C,
      "c6-resume-bad-idle",
      "idle energy of an unknown provenance: BadSegment, after the preconditions",
      "runrecord.resume",
      { ...(input(parked, SNAP as unknown as Json) as JsonObject), idle: { ...idle, provenance: "guessed" } },
      "BadSegment",
    ),
    errCase(
      C,
      "c6-resume-environment-and-bad-idle",
      "an unsatisfied environment and a malformed idle figure: EnvironmentMismatch, a precondition first",
      "runrecord.resume",
      {
        ...(input(parked, SNAP as unknown as Json, false) as JsonObject),
        idle: { ...idle, provenance: "guessed" },
      },
      "EnvironmentMismatch",
    ),
    errCase(
      C,
      "c6-resume-unverifiable",
      "a resume of a record that does not verify from genesis",
      "runrecord.resume",
      input(parked.replace('"n":2', '"n":3'), SNAP as unknown as Json),
      "BadRecord",
    ),
  ];
}

export function energyVectors(): Vector[] {
  const segs = [
    exec(1),
    suspend(10),
    resume(20, "1000", SNAP, "measured"),
    exec(2),
    suspend(30),
    resume(40, "2500", SNAP, "attributed"),
    exec(3),
    suspend(50),
    resume(60, "400000"),
    close(70),
  ];
  const active = {
    [id("attestation-1")]: "5000000",
    [id("attestation-2")]: "7000000",
    [id("attestation-3")]: "1000000",
  };
  const record = wire(segs);
  return [
    okCase(
      C,
      "c6-energy-idle-accumulates",
      "three parks: idle energy by provenance, total = receipts + idle",
      "runrecord.energy",
      { record, active_uj: active },
      {
        active_uj: "13000000",
        idle_uj: "403500",
        total_uj: "13403500",
        idle_by_provenance: { measured: "1000", attributed: "2500", estimated: "400000" },
        unresolved: [],
        complete: true,
      },
    ),
    okCase(
      C,
      "c6-energy-unresolved",
      "an attestation not at hand: the total is a lower bound and says so",
      "runrecord.energy",
      { record, active_uj: { [id("attestation-1")]: "5000000" } },
      {
        active_uj: "5000000",
        idle_uj: "403500",
        total_uj: "5403500",
        idle_by_provenance: { measured: "1000", attributed: "2500", estimated: "400000" },
        unresolved: [id("attestation-2"), id("attestation-3")],
        complete: false,
      },
    ),
    // §13.6: one entry per unresolved executed segment, repeats kept; every provenance named.
    okCase(
      C,
      "c6-energy-repeat-unresolved",
      "two executed segments citing one absent attestation, no idle: listed twice, every provenance 0",
      "runrecord.energy",
      { record: wire([exec(1), exec(1), close(70)]), active_uj: {} },
      {
        active_uj: "0",
        idle_uj: "0",
        total_uj: "0",
        idle_by_provenance: { measured: "0", attributed: "0", estimated: "0" },
        unresolved: [id("attestation-1"), id("attestation-1")],
        complete: false,
      },
    ),
  ];
}

const hex = (s: string): string => Buffer.from(s).toString("hex");

export function fsTreeVectors(): Vector[] {
  const tree = [
    { name: "b.txt", kind: "file", mode: 0o644, content_hex: hex("bee\n") },
    { name: "a.sh", kind: "file", mode: 0o755, content_hex: hex("#!/bin/sh\n") },
    {
      name: "src",
      kind: "dir",
      mode: 0o755,
      entries: [
        { name: "empty", kind: "file", mode: 0o600, content_hex: "" },
        { name: "up", kind: "symlink", target: "../b.txt" },
      ],
    },
    { name: "é", kind: "file", mode: 0o644, content_hex: hex("accent") },
  ];
  const nested = [
    { name: "a", kind: "dir", mode: 0o700, entries: [{ name: "b", kind: "dir", mode: 0o755, entries: [] }] },
    { name: "empty", kind: "dir", mode: 0o755, entries: [] },
    { name: "link", kind: "symlink", target: "a/b" },
  ];
  const entry = (name: string, extra: Record<string, Json> = {}) => ({
    digest: id(name),
    kind: "file",
    mode: 420,
    name,
    size: "1",
    ...extra,
  });
  const dir = (entries: Json[]): string => canonicalize({ entries, format: "sandbox.fs.dir/1" });
  const bad: [string, string][] = [
    ["unsorted", dir([entry("b"), entry("a")])],
    ["duplicate", dir([entry("a"), entry("a")])],
    ["setuid-mode", dir([entry("a", { mode: 0o4755 })])],
    ["dotdot-name", dir([entry("..")])],
    ["slash-name", dir([entry("a/b")])],
    ["device-kind", dir([entry("a", { kind: "chardev" })])],
    ["symlink-mode", dir([entry("a", { kind: "symlink", mode: 0o755 })])],
    ["size-number", dir([entry("a", { size: 1 })])],
    ["not-canonical", dir([entry("a")]).replace('"entries":', '"entries": ')],
  ];
  const good = dir([entry("a"), entry("b", { kind: "dir", mode: 493, size: "0" })]);
  return [
    // §11.3 `fstree.parse_dir` row: `entries` (their number) and `address` (the object's, §2.3).
    okCase(
      C,
      "c6-fstree-parse-dir",
      "a valid directory object: its entries counted, its address",
      "fstree.parse_dir",
      { text: good },
      { entries: 2, address: addressOf(JSON.parse(good) as Json) },
    ),
    okCase(
      C,
      "c6-fstree-root",
      "a tree's root is the address of its directory DAG (entries sorted by name bytes)",
      "fstree.root",
      { entries: tree },
      fsRootOf(tree),
    ),
    okCase(
      C,
      "c6-fstree-nested",
      "nested and empty directories: dirs counts every directory object, the root's included (§13.8)",
      "fstree.root",
      { entries: nested },
      fsRootOf(nested),
    ),
    ...bad.map(([n, text]) =>
      errCase(
        C,
        `c6-fstree-${n}`,
        `directory object refused: ${n}`,
        "fstree.parse_dir",
        { text },
        "BadFsTree",
      ),
    ),
  ];
}
function fsRootOf(tree: Json): Json {
  return fsTreeOutputOracle("fstree.root", { entries: tree })!;
}
