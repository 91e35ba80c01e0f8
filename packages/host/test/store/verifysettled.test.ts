// §13.9 verification reads the settled view: a segment committed by its claim whose line is only
// partly in the record file verifies as committed, without writing to the store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import { decodeRecord, type Segment } from "@sbx/sandbox-attest/runrecord";
import { FileStore, verifyRecordFiles } from "../../src/store/index.ts";

const d = (s: string): Digest => digestBytes(utf8(s));
const exec = (n: string): Segment => ({ kind: "executed", attestation: d(n) });

test("a segment committed by its claim but half written verifies as committed, read-only", async () => {
  const base = mkdtempSync(join(tmpdir(), "sbx-settled-"));
  try {
    const s = FileStore.open(base, { create: true });
    const id = await s.createRecord(d("unit"), d("grants"));
    const h1 = await s.appendSegment(id, id, exec("a"));
    const file = s.recordPath(id);
    const full = readFileSync(file);
    const genesisEnd = decodeRecord(full).lineEnds[0] ?? 0;
    // the writer died after its claim, with its line half written
    truncateSync(file, genesisEnd + 10);
    const r = verifyRecordFiles(file, FileStore.open(base, { readOnly: true }), { expectHead: h1 });
    assert.equal(r.error, null, JSON.stringify(r.error));
    assert.equal(r.head, h1);
    assert.equal(readFileSync(file).length, genesisEnd + 10, "verification wrote nothing");
    // without a store (record only) the file is judged as it stands
    assert.equal(verifyRecordFiles(file, null).error?.code, "TornRecord");
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
