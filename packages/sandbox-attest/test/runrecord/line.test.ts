// The fast line reader (line.ts) against the strict one: the canonical text it rebuilds is RFC 8785's,
// and every line it accepts the strict reader accepts as the same segment.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { canonicalize, parseStrict, utf8, type Digest } from "@sbx/wire";
import {
  encodeSegmentLine,
  parseSegment,
  readSegmentLine,
  segmentJcs,
  type Segment,
} from "../../src/runrecord/index.ts";
import { d } from "./fixtures.ts";

const digestArb = fc.string({ maxLength: 8 }).map((s) => d(s));
const snapArb = fc
  .record(
    { fs_root: digestArb, manifest: digestArb, memory: digestArb },
    { requiredKeys: ["fs_root", "manifest"] },
  )
  .map((o) => ({ ...o }));
const timeArb = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const basisKeyArb = fc
  .string({ minLength: 1, maxLength: 6, unit: "grapheme" })
  .filter((k) => !["__proto__", "constructor", "prototype"].includes(k));
const segArb: fc.Arbitrary<Segment> = fc.oneof(
  digestArb.map((attestation): Segment => ({ kind: "executed", attestation })),
  fc.record({ snapshot: snapArb, at_ms: timeArb }).map((o): Segment => ({ kind: "suspended", ...o })),
  fc
    .record({
      at_ms: timeArb,
      outcome: fc.constantFrom<"completed" | "failed" | "abandoned">("completed", "failed", "abandoned"),
    })
    .map((o): Segment => ({ kind: "closed", ...o })),
  fc
    .record({
      snapshot: snapArb,
      at_ms: timeArb,
      idle_uj: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
      idle_source: fc.string({ minLength: 1, maxLength: 40, unit: "grapheme" }),
      idle_basis: fc
        .dictionary(basisKeyArb, fc.nat().map(String), { minKeys: 1, maxKeys: 5 })
        .map((o) => ({ ...o })),
    })
    .map((o): Segment => ({ kind: "resumed", idle_provenance: "estimated", ...o })),
);

test("segmentJcs is the RFC 8785 text of every segment", () => {
  fc.assert(fc.property(segArb, (s) => assert.equal(segmentJcs(s), canonicalize(s))));
});

test("the fast reader accepts a writer's line and returns its segment, head and hash input", () => {
  fc.assert(
    fc.property(segArb, fc.integer({ min: 1, max: 1e6 }), (s, n) => {
      const head: Digest = d(`h${n}`);
      const line = encodeSegmentLine(n, head, s);
      const got = readSegmentLine(line.subarray(0, line.length - 1), n);
      assert.ok(got !== null);
      assert.deepEqual(got.seg, s);
      assert.equal(got.head, head);
      assert.deepEqual(got.canonical, utf8(canonicalize(s)));
    }),
  );
});

test("every line the fast reader accepts after a byte change, the strict reader reads the same", () => {
  const lines = fc
    .sample(segArb, { numRuns: 40, seed: 16 })
    .map((s, i) => encodeSegmentLine(i + 1, d(`h${i}`), s));
  lines.forEach((full, i) => {
    const line = full.subarray(0, full.length - 1);
    for (let b = 0; b < line.length; b++)
      for (const mask of [0x01, 0x20, 0x80]) {
        const x = line.slice();
        x[b]! ^= mask;
        const fast = readSegmentLine(x, i + 1);
        if (fast === null) continue;
        const v = parseStrict(x) as { head: string; n: number; segment: unknown };
        assert.equal(canonicalize(v), new TextDecoder().decode(x), `line ${i} byte ${b}`);
        assert.deepEqual(parseSegment(v.segment), fast.seg, `line ${i} byte ${b}`);
        assert.equal(v.head, fast.head);
      }
  });
});
