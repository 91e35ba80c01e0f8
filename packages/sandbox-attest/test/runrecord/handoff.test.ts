// §13.2a The hand-off: signHandoff's segment verifies on both readers (the fast line reader rebuilds
// its JCS text exactly), nothing can follow it (RunMoved), a forged, altered or transplanted one is
// BadHandoff, a resume is refused RunMoved, and verifyRun holds its signer to the trusted hosts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { canonicalize, testKey, utf8, type Digest } from "@sbx/wire";
import {
  checkResume,
  decodeRecord,
  encodeRecord,
  RunRecord,
  segmentJcs,
  signHandoff,
  type Segment,
} from "../../src/runrecord/index.ts";
import { verifyRun } from "../../src/store/index.ts";
import { d } from "./fixtures.ts";

const host = testKey("host");
const SNAP = { fs_root: d("root"), manifest: d("manifest") };

function parked(): RunRecord {
  const r = RunRecord.create(d("unit"), d("grants"));
  r.append({ kind: "executed", attestation: d("att") });
  r.append({ kind: "suspended", snapshot: SNAP, at_ms: 10 });
  return r;
}

const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;

test("a signed hand-off ends the record: both readers take it, nothing follows it", async () => {
  const r = parked();
  const handed = r.head;
  const mv = signHandoff(host, handed, "store B ✓", 20);
  assert.equal(segmentJcs(mv), canonicalize(mv));
  r.append(mv);
  assert.equal(r.phase, "moved");
  assert.equal(r.movedTo, "store B ✓");
  const back = decodeRecord(encodeRecord(r)).record;
  assert.equal(back.head, r.head);
  assert.equal(back.movedTo, "store B ✓");
  for (const seg of [
    {
      kind: "resumed",
      snapshot: SNAP,
      at_ms: 30,
      idle_uj: "0",
      idle_provenance: "measured",
      idle_source: "x",
    },
    { kind: "closed", at_ms: 30, outcome: "abandoned" },
    { kind: "executed", attestation: d("att-2") },
    signHandoff(host, r.head, "again", 30),
  ] as Segment[])
    assert.throws(() => r.fork().append(seg), code("RunMoved"), seg.kind);
  await assert.rejects(checkResume(back, SNAP, { satisfies: () => true }), code("RunMoved"));
});

test("a forged, altered or transplanted hand-off is BadHandoff; one of an active run PhaseViolation", () => {
  const r = parked();
  const good = signHandoff(host, r.head, "B", 20);
  const forged = { ...signHandoff(testKey("mallory"), r.head, "B", 20), signer: host.did };
  assert.throws(() => r.fork().append(forged), code("BadHandoff"));
  assert.throws(() => r.fork().append({ ...good, to: "C" }), code("BadHandoff"));
  assert.throws(() => r.fork().append(signHandoff(host, r.heads[1]!, "B", 20)), code("BadHandoff"));
  const active = RunRecord.create(d("unit"), d("grants"));
  assert.throws(() => active.append(signHandoff(host, active.head, "B", 20)), code("PhaseViolation"));
  // The strict reader refuses a forged line as the appender does, before its stated head.
  const text = new TextDecoder().decode(encodeRecord(r)) + encodeLineUnchecked(r, { ...good, to: "C" });
  assert.throws(() => decodeRecord(utf8(text)), code("BadHandoff"));
});

test("verifyRun holds the hand-off's signer to the trusted hosts (HostMismatch)", () => {
  const r = parked();
  r.append(signHandoff(host, r.head, "B", 20));
  const bytes = encodeRecord(r);
  const none = { getObject: () => null, getSigned: () => null };
  assert.equal(verifyRun(bytes, none, { hosts: [host.did] }).valid, true);
  const v = verifyRun(bytes, none, { hosts: [testKey("other").did] });
  assert.equal(v.error?.code, "HostMismatch");
});

// A segment line built without the record's checks (a forged line's stated head is what it claims).
function encodeLineUnchecked(r: RunRecord, seg: Segment): string {
  const head: Digest = d("not the head");
  return `${canonicalize({ head, n: r.segments.length + 1, segment: seg })}\n`;
}
