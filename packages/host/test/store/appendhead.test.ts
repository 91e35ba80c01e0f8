// §13.7 Appends continue from the head the store verified: what precedes it is not read again, a
// tail another writer appended is verified on the way, and a claim slot a crash of the machine left
// incomplete is passed over (only a complete claim commits).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  appendFileSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes, parseDigest, toHex, utf8, type Digest } from "@sbx/wire";
import {
  decodeRecord,
  encodeSegmentLine,
  isSandboxAttestError,
  segmentHead,
  type Segment,
} from "@sbx/sandbox-attest/runrecord";
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
  assert.ok(lstatSync(join(claims, `${hex}.1`), { throwIfNoEntry: false }), "the next slot holds the claim");
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

test("a claim is a symbolic link holding its line, or a claim file for a long line; both roll forward", async () => {
  const s = FileStore.open(dir(), { create: true });
  const id = await s.createRecord(UNIT, GRANTS);
  const h1 = await s.appendSegment(id, id, exec("a"));
  const { claims, file } = recordPaths(s.root, id);
  const slot1 = join(claims, toHex(parseDigest(id)));
  assert.ok(lstatSync(slot1).isSymbolicLink(), "a short line is claimed by one symlink(2)");
  const lines = readFileSync(file);
  assert.deepEqual(readlinkSync(slot1, { encoding: "buffer" }), lines.subarray(lines.indexOf(10) + 1));
  // A line longer than a symbolic link carries (a resumed segment with a wide basis) takes the claim-file path.
  const snapshot = { fs_root: d("fs"), manifest: d("m") };
  const h2 = await s.appendSegment(id, h1, { kind: "suspended", snapshot, at_ms: 1 });
  const basis = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`coefficient_${i}`, "1234567.890"]));
  const resumed: Segment = {
    kind: "resumed",
    snapshot,
    at_ms: 2,
    idle_uj: "5",
    idle_provenance: "estimated",
    idle_source: "model:bench",
    idle_basis: basis,
  };
  const h3 = await s.appendSegment(id, h2, resumed);
  const slot3 = join(claims, toHex(parseDigest(h2)));
  assert.ok(lstatSync(slot3).isFile(), "a long line is claimed by a linked claim file");
  assert.ok(readFileSync(slot3).length > 1000);
  // Both forms are read back as claims: cut the last two lines and the next writer completes them.
  const full = readFileSync(file);
  const cut = full.lastIndexOf(10, full.lastIndexOf(10, full.length - 2) - 1) + 1;
  writeFileSync(file, full.subarray(0, cut));
  const fresh = FileStore.open(s.root);
  assert.deepEqual(fresh.inspect(id), { rolledForward: 2, cutBytes: 0 });
  assert.deepEqual(fresh.settle(id), { rolledForward: 2, cutBytes: 0 });
  assert.deepEqual(readFileSync(file), full);
  assert.equal(decodeRecord(full).record.head, h3);
  // A claim is never followed to another file: a slot that is a symbolic link is its own target's
  // text, so a link to a file holding a valid next line is a void slot (no line feed), passed over.
  const next = exec("c");
  const elsewhere = join(s.root, "elsewhere");
  writeFileSync(elsewhere, encodeSegmentLine(4, segmentHead(h3, next), next));
  const slot4 = join(claims, toHex(parseDigest(h3)));
  symlinkSync(elsewhere, slot4);
  assert.deepEqual(fresh.inspect(id), { rolledForward: 0, cutBytes: 0 });
  await fresh.appendSegment(id, h3, next);
  assert.ok(lstatSync(`${slot4}.1`).isSymbolicLink(), "the next slot holds the claim");
});
