// The fast line reader (line.ts) against the strict one: the canonical text it rebuilds is RFC 8785's,
// and every line it accepts the strict reader accepts as the same segment; the header reader against
// a plain restatement of the header rule.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { canonicalize, isDigest, parseStrict, utf8, type Digest } from "@sbx/wire";
import {
  decodeRecord,
  encodeHeader,
  encodeSegmentLine,
  RUNRECORD_TAG,
  runGenesis,
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

// The header's fast reader (wire.ts readHeaderLine) against a plain restatement of §13.5's header
// rule: a header line is accepted exactly when it is one JSON object of the four members, in its
// canonical text, whose ids are digests and whose head is head₀ of those ids; otherwise the record is
// refused, GenesisMismatch for a wrong head, BadRecord for everything else.
function headerRule(line: Uint8Array): "ok" | "GenesisMismatch" | "BadRecord" {
  let v: unknown;
  try {
    v = parseStrict(new TextDecoder("utf-8", { fatal: true }).decode(line));
  } catch {
    return "BadRecord";
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "BadRecord";
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort().join(",");
  if (keys !== "format,grants_id,head,unit_id" || o["format"] !== RUNRECORD_TAG) return "BadRecord";
  if (!isDigest(o["unit_id"]) || !isDigest(o["grants_id"]) || !isDigest(o["head"])) return "BadRecord";
  if (canonicalize(o) !== new TextDecoder().decode(line)) return "BadRecord";
  return runGenesis(o["unit_id"], o["grants_id"]) === o["head"] ? "ok" : "GenesisMismatch";
}

test("the header reader accepts exactly the headers the rule accepts: every one-byte change of a writer's header", () => {
  const header = encodeHeader(d("unit"), d("grants"));
  const line = header.subarray(0, header.length - 1);
  const subs = [0x20, 0x22, 0x30, 0x41, 0x61, 0x66, 0x67, 0x7b, 0x7d, 0xc3];
  let refused = 0;
  for (let i = 0; i < line.length; i++)
    for (const b of subs) {
      if (line[i] === b) continue;
      const bad = Uint8Array.from(header);
      bad[i] = b;
      const want = headerRule(bad.subarray(0, bad.length - 1));
      let got: string;
      try {
        got = decodeRecord(bad).record.genesis === runGenesis(d("unit"), d("grants")) ? "ok" : "ok-other";
      } catch (e) {
        got = (e as { code?: string }).code ?? "uncoded";
      }
      if (want === "ok") assert.equal(got.startsWith("ok"), true, `byte ${String(i)} → ${String(b)}`);
      else assert.equal(got, want, `byte ${String(i)} → ${String(b)}`);
      if (got !== "ok" && got !== "ok-other") refused++;
    }
  assert.ok(refused > line.length * 5, "most one-byte changes are refused");
  assert.equal(decodeRecord(header).record.genesis, runGenesis(d("unit"), d("grants")));
  // The ids a caller names must be bound (fast path or not): GenesisMismatch otherwise.
  assert.throws(() => decodeRecord(header, { unitId: d("other") }), { code: "GenesisMismatch" });
  assert.throws(() => decodeRecord(header, { grantsId: d("other") }), { code: "GenesisMismatch" });
});
