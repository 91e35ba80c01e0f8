// §13.7 Appends continue from the head the store verified: what precedes it is not read again, a
// tail another writer appended is verified on the way, and a claim slot a crash of the machine left
// incomplete is passed over (only a complete claim commits).
import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes, parseDigest, toHex, utf8, type Digest } from "@sbx/wire";
import { decodeRecord, isSandboxAttestError, type Segment } from "@sbx/sandbox-attest/runrecord";
import { readRun } from "@sbx/sandbox-attest/store";
import { FileStore, recordPaths } from "../../src/store/index.ts";

const d = (s: string): Digest => digestBytes(utf8(s));
const UNIT = d("unit");
const GRANTS = d("grants");
const exec = (n: string): Segment => ({ kind: "executed", attestation: d(n) });
const code = (c: string) => (e: unknown) => isSandboxAttestError(e) && e.code === c;
const dir = () => mkdtempSync(join(tmpdir(), "sbx-ah-"));

test("an append does not read the record before the head this store verified", async () => {
  const s = FileStore.open(dir(), { create: true });
  const id = await s.createRecord(UNIT, GRANTS);
  const h1 = await s.appendSegment(id, id, exec("a"));
  // Flip a byte inside line 2 (segment 1), which this store has verified already.
  const file = s.recordPath(id);
  const b = readFileSync(file);
  const i = b.indexOf(utf8('"n":1')) + 4;
  b[i] = "7".charCodeAt(0);
  writeFileSync(file, b);
  // This store continues from its verified head; a store opened afresh verifies from genesis and refuses.
  const h2 = await s.appendSegment(id, h1, exec("b"));
  assert.notEqual(h2, h1);
  await assert.rejects(FileStore.open(s.root).appendSegment(id, h2, exec("c")), code("BadRecord"));
});

test("a tail appended by another store is verified before this store appends after it", async () => {
  const root = dir();
  const a = FileStore.open(root, { create: true });
  const b = FileStore.open(root);
  const id = await a.createRecord(UNIT, GRANTS);
  const h1 = await a.appendSegment(id, id, exec("a"));
  const h2 = await b.appendSegment(id, h1, exec("b"));
  await assert.rejects(a.appendSegment(id, h1, exec("c")), code("StaleHead"));
  const h3 = await a.appendSegment(id, h2, exec("c"));
  // A forged tail (a complete line that does not continue the chain) is refused by the cached store too.
  const before = readFileSync(a.recordPath(id));
  const lastLine = before.subarray(before.lastIndexOf(10, before.length - 2) + 1);
  appendFileSync(a.recordPath(id), lastLine);
  await assert.rejects(a.appendSegment(id, h3, exec("d")), code("BadRecord"));
  assert.equal(readFileSync(a.recordPath(id)).length, before.length + lastLine.length, "nothing written");
});

test("an incomplete claim slot (a crash of the machine) commits nothing and is passed over", async () => {
  const s = FileStore.open(dir(), { create: true });
  const id = await s.createRecord(UNIT, GRANTS);
  const h1 = await s.appendSegment(id, id, exec("a"));
  const { claims } = recordPaths(s.root, id);
  const hex = toHex(parseDigest(h1));
  writeFileSync(join(claims, hex), '{"head":"blake3:00'); // no line feed: never linked like this by a writer
  const fresh = FileStore.open(s.root);
  assert.deepEqual(fresh.inspect(id), { rolledForward: 0, cutBytes: 0 });
  const h2 = await fresh.appendSegment(id, h1, exec("b"));
  assert.ok(existsSync(join(claims, `${hex}.1`)), "the next slot holds the claim");
  const r = decodeRecord((await fresh.readRecordBytes(id))!).record;
  assert.equal(r.head, h2);
  assert.equal(r.segments.length, 2);
});

test("readRun decodes once: the state it verified serves the append that follows (resume)", async () => {
  const s = FileStore.open(dir(), { create: true });
  const id = await s.createRecord(UNIT, GRANTS);
  const h1 = await s.appendSegment(id, id, exec("a"));
  const fresh = FileStore.open(s.root);
  const r = await readRun(fresh, id);
  assert.equal(r.head, h1);
  const file = s.recordPath(id);
  const b = readFileSync(file);
  b[b.indexOf(utf8('"n":1')) + 4] = "7".charCodeAt(0); // not read again by the append
  writeFileSync(file, b);
  await fresh.appendSegment(id, h1, exec("b"));
  await assert.rejects(readRun(FileStore.open(s.root), id), code("BadRecord"));
});
