import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { concatBytes, utf8 } from "@sbx/wire";
import { isSandboxAttestError } from "../../src/errors.ts";
import { decodeRecord, encodeRecord, RunRecord, type Segment } from "../../src/runrecord/index.ts";
import { close, d, exec, GRANTS, resume, suspend, UNIT, VALID_RUN } from "./fixtures.ts";

const bytes = encodeRecord(RunRecord.fromSegments(UNIT, GRANTS, VALID_RUN));

test("wire form round-trips and reports line ends", () => {
  const { record, lineEnds, tornBytes } = decodeRecord(bytes);
  assert.deepEqual(record.segments, VALID_RUN);
  assert.equal(lineEnds.length, VALID_RUN.length + 1);
  assert.equal(lineEnds.at(-1), bytes.length);
  assert.equal(tornBytes, 0);
});

test("every single-byte change anywhere in the wire form is refused", () => {
  const codes = new Set<string>();
  for (let i = 0; i < bytes.length; i++)
    for (const mask of [0x01, 0x20, 0x80, 0xff]) {
      const b = bytes.slice();
      b[i]! ^= mask;
      assert.throws(
        () => decodeRecord(b),
        (e) => isSandboxAttestError(e) && (codes.add(e.code), true),
        `byte ${i} ^ ${mask} accepted`,
      );
    }
  assert.ok(
    codes.has("HeadMismatch") && codes.has("BadRecord") && codes.has("TornRecord"),
    [...codes].join(","),
  );
});

test("executed lines after a line with non-ASCII text: read the same, every byte change refused", () => {
  // The fast reader slices strings out of a one-character-per-byte text of the file; a multi-byte
  // character before an executed line must not shift what it reads, nor let a changed byte through.
  const run: Segment[] = [
    exec("a"),
    suspend(1),
    { ...(resume(2, "7") as Segment & { kind: "resumed" }), idle_source: "modèle:stockage·résidence ✓" },
    exec("b"),
    exec("c"),
  ];
  const wire = encodeRecord(RunRecord.fromSegments(UNIT, GRANTS, run));
  assert.ok(wire.some((x) => x >= 0x80));
  assert.deepEqual(decodeRecord(wire).record.segments, run);
  for (let i = 0; i < wire.length; i++)
    for (const mask of [0x01, 0x80]) {
      const b = wire.slice();
      b[i]! ^= mask;
      assert.throws(() => decodeRecord(b), isSandboxAttestError, `byte ${i} ^ ${mask} accepted`);
    }
});

test("a torn tail is TornRecord, or reported with allowTorn; every truncation is caught", () => {
  const ends = decodeRecord(bytes).lineEnds;
  for (let n = 0; n < bytes.length; n++) {
    const cut = bytes.subarray(0, n);
    if (ends.includes(n)) {
      assert.equal(decodeRecord(cut).record.segments.length, ends.indexOf(n), `cut at line end ${n}`);
      continue;
    }
    assert.throws(
      () => decodeRecord(cut),
      (e) => isSandboxAttestError(e) && (e.code === "TornRecord" || e.code === "BadRecord"),
      `cut ${n}`,
    );
    if (n >= ends[0]!)
      assert.equal(
        decodeRecord(cut, { allowTorn: true }).tornBytes,
        n - Math.max(...ends.filter((x) => x <= n)),
      );
  }
});

test("a header binding another unit or grant set is GenesisMismatch when ids are expected", () => {
  const other = encodeRecord(RunRecord.fromSegments(d("unit-2"), GRANTS, VALID_RUN));
  assert.throws(
    () => decodeRecord(other, { unitId: UNIT, grantsId: GRANTS }),
    (e) => isSandboxAttestError(e, "GenesisMismatch"),
  );
  const og = encodeRecord(RunRecord.fromSegments(UNIT, d("grants-2"), VALID_RUN));
  assert.throws(
    () => decodeRecord(og, { unitId: UNIT, grantsId: GRANTS }),
    (e) => isSandboxAttestError(e, "GenesisMismatch"),
  );
});

test("segment lines spliced from another unit's record break the chain", () => {
  const a = decodeRecord(bytes);
  const other = encodeRecord(RunRecord.fromSegments(d("unit-2"), GRANTS, VALID_RUN));
  const ob = decodeRecord(other);
  const spliced = concatBytes(
    bytes.subarray(0, a.lineEnds[2]),
    other.subarray(ob.lineEnds[2], ob.lineEnds[3]),
  );
  assert.throws(
    () => decodeRecord(spliced),
    (e) => isSandboxAttestError(e, "HeadMismatch"),
  );
});

test("a modified recorded snapshot in the wire form fails verification", () => {
  const text = new TextDecoder().decode(bytes);
  const tampered = text.replace(d("fs-root"), d("fs-root-2"));
  assert.notEqual(text, tampered);
  assert.throws(
    () => decodeRecord(utf8(tampered)),
    (e) => isSandboxAttestError(e, "HeadMismatch"),
  );
});

const segArb: fc.Arbitrary<(t: number) => Segment[]> = fc.constantFrom(
  (t: number) => [exec(`a${t}`)],
  (t: number) => [suspend(t), resume(t + 1, String(t))],
);

test("property: any valid run round-trips through the wire form", () => {
  fc.assert(
    fc.property(fc.array(segArb, { maxLength: 12 }), fc.boolean(), (parts, closed) => {
      const segs = parts.flatMap((p, i) => p(i * 10));
      if (closed) segs.push(close(1000));
      const r = RunRecord.fromSegments(UNIT, GRANTS, segs);
      const back = decodeRecord(encodeRecord(r)).record;
      assert.deepEqual(back.heads, r.heads);
    }),
  );
});
