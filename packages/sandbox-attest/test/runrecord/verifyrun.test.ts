// §13.9 verifyRun over objects held in maps, and the §16.1 fleet item derived from its result.
import { test } from "node:test";
import assert from "node:assert/strict";
import { addressOf, canonicalBytes, digestBytes, testKey, utf8, type Digest } from "@sbx/wire";
import { signAttestation } from "../../src/attestation/index.ts";
import { encodeFsDir, encodeRecord, RunRecord, type Segment } from "../../src/runrecord/index.ts";
import { verifyRun, type RunObjects } from "../../src/store/index.ts";
import { fleetItemOfRun } from "../../src/fleet/index.ts";
import { isSandboxAttestError } from "../../src/errors.ts";

const UNIT_DESC = { test: "verifyrun" };
const UNIT = addressOf(UNIT_DESC);
const GRANTS = digestBytes(utf8("grants"));
const host = testKey("host");

function fixture() {
  const plain = new Map<Digest, Uint8Array>();
  const signed = new Map<Digest, unknown>();
  const put = (b: Uint8Array): Digest => (plain.set(digestBytes(b), b), digestBytes(b));
  const file = put(utf8("hello\n"));
  const root = put(encodeFsDir([{ name: "a.txt", kind: "file", mode: 0o644, size: "6", digest: file }]));
  const manifest = put(canonicalBytes({ manifest: "m" }));
  const receipt = put(utf8("receipt"));
  const r = RunRecord.create(UNIT, GRANTS);
  const env = signAttestation(
    {
      unit_id: UNIT,
      grants_id: GRANTS,
      manifest,
      exec_policy: digestBytes(utf8("p")),
      energy: { receipt, total_uj: "700", provenance: "estimated" },
      journal: { root: digestBytes(utf8("j")), events: 1 },
      outcome: { status: "exited", exit_code: 0 },
      interval: { start_ms: 5, end_ms: 9 },
      level: "S5",
      run_head: r.head,
    },
    host,
    UNIT_DESC,
  );
  const att = addressOf(JSON.parse(Buffer.from(env.payload, "base64").toString()));
  signed.set(att, env);
  const snap = { fs_root: root, manifest };
  const segs: Segment[] = [
    { kind: "executed", attestation: att },
    { kind: "suspended", snapshot: snap, at_ms: 10 },
    {
      kind: "resumed",
      snapshot: snap,
      at_ms: 20,
      idle_uj: "30",
      idle_provenance: "measured",
      idle_source: "t",
    },
    { kind: "closed", at_ms: 30, outcome: "completed" },
  ];
  for (const s of segs) r.append(s);
  const objects: RunObjects = {
    getObject: (a) => plain.get(a) ?? null,
    getSigned: (a) => signed.get(a) ?? null,
  };
  return { bytes: encodeRecord(r), objects, plain, record: r, file, att };
}

test("verifyRun returns the decoded record, its opened attestations, energy and the objects it references", () => {
  const f = fixture();
  const v = verifyRun(f.bytes, f.objects, { hosts: [host.did], expectId: f.record.genesis });
  assert.equal(v.valid, true, v.error?.message);
  assert.equal(v.record?.head, f.record.head);
  assert.equal(v.attestations.get(f.att)?.predicate.energy.total_uj, "700");
  assert.equal(v.energy?.total_uj, "730");
  assert.deepEqual(v.signers, [host.did]);
  assert.deepEqual(v.objects.signed, [f.att]);
  assert.equal(v.objects.plain.length, 4); // tree root, file, manifest, receipt
  const item = fleetItemOfRun(v, "run-1");
  assert.deepEqual(item, {
    item: { item: "run-1", head: f.record.head, energy_uj: "730", outcome: "completed" },
    start_ms: 5,
    end_ms: 30,
  });
});

test("verifyRun refuses with codes and lists what is missing", () => {
  const f = fixture();
  assert.equal(verifyRun(f.bytes, f.objects, { hosts: [testKey("other").did] }).error?.code, "HostMismatch");
  assert.equal(verifyRun(f.bytes, f.objects, { expectId: GRANTS }).error?.code, "GenesisMismatch");
  f.plain.set(f.file, utf8("hellO\n")); // a holder that does not check addresses: verifyRun does
  assert.equal(verifyRun(f.bytes, f.objects).error?.code, "ObjectMismatch");
  f.plain.delete(f.file);
  assert.equal(verifyRun(f.bytes, f.objects).error?.code, "ObjectMissing");
  const bad = f.bytes.slice();
  bad[bad.length - 5]! ^= 1;
  const v = verifyRun(bad, f.objects);
  assert.equal(v.valid, false);
  assert.equal(v.record, null);
  assert.throws(
    () => fleetItemOfRun(v, "x"),
    (e) => isSandboxAttestError(e, "BadFleetItem"),
  );
  const open = RunRecord.create(UNIT, GRANTS);
  const none = verifyRun(encodeRecord(open), { getObject: () => null, getSigned: () => null });
  assert.throws(
    () => fleetItemOfRun(none, "x"),
    (e) => isSandboxAttestError(e, "BadFleetItem"),
  );
});
