import { test } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { digestBytes, utf8, signPayload, testKey, parseDigest, toHex, type Digest } from "@sbx/wire";
import {
  decodeRecord,
  encodeSegmentLine,
  isSandboxAttestError,
  segmentHead,
  type Segment,
} from "@sbx/sandbox-attest/runrecord";
import { openSigned } from "@sbx/sandbox-attest/store";
import { FileStore, recordPaths } from "../../src/store/index.ts";
import { isHostError } from "../../src/errors.ts";

const d = (s: string): Digest => digestBytes(utf8(s));
const UNIT = d("unit"),
  GRANTS = d("grants");
const exec = (n: string): Segment => ({ kind: "executed", attestation: d(n) });
const code = (c: string) => (e: unknown) => isSandboxAttestError(e) && e.code === c;

function fresh(): FileStore {
  return FileStore.open(mkdtempSync(join(tmpdir(), "sbx-fs-")), { create: true });
}

test("objects: put, get, re-put, flip detection", async () => {
  const s = fresh();
  const a = await s.putObject(utf8("content"));
  assert.equal(a, d("content"));
  assert.equal(await s.putObject(utf8("content")), a);
  assert.deepEqual(await s.getObject(a), utf8("content"));
  const p = s.objectPath(a);
  chmodSync(p, 0o644);
  writeFileSync(p, "contenu");
  await assert.rejects(s.getObject(a), code("ObjectMismatch"));
  assert.throws(
    () => FileStore.open(mkdtempSync(join(tmpdir(), "sbx-no-"))),
    (e) => isHostError(e, "StoreUnusable"),
  );
});

test("signed objects are stored under their payload address and verified on open", async () => {
  const s = fresh();
  const env = signPayload("application/vnd.test+json", { a: 1 }, testKey("host"));
  const a = await s.putSigned(env);
  const back = await s.getSigned(a);
  assert.equal(openSigned(a, back, "application/vnd.test+json").address, a);
});

test("records: create, append, StaleHead, RecordExists, RecordClosed", async () => {
  const s = fresh();
  const id = await s.createRecord(UNIT, GRANTS);
  await assert.rejects(s.createRecord(UNIT, GRANTS), code("RecordExists"));
  const h1 = await s.appendSegment(id, id, exec("a"));
  await assert.rejects(s.appendSegment(id, id, exec("b")), code("StaleHead"));
  const h2 = await s.appendSegment(id, h1, { kind: "closed", at_ms: 1, outcome: "abandoned" });
  await assert.rejects(s.appendSegment(id, h2, exec("c")), code("RecordClosed"));
  const r = decodeRecord((await s.readRecordBytes(id))!).record;
  assert.equal(r.head, h2);
});

test("a torn tail without a claim is cut back and reported; a claimed one is completed", async () => {
  const s = fresh();
  const id = await s.createRecord(UNIT, GRANTS);
  const h1 = await s.appendSegment(id, id, exec("a"));
  const { file, claims } = recordPaths(s.root, id);
  appendFileSync(file, '{"head":"blake3:00');
  assert.deepEqual(s.settle(id), { rolledForward: 0, cutBytes: 18 });
  assert.equal(decodeRecord(readFileSync(file)).record.head, h1);
  // a claimed line half written: completed from its claim
  const seg = exec("b");
  const line = encodeSegmentLine(2, segmentHead(h1, seg), seg);
  writeFileSync(join(claims, toHex(parseDigest(h1))), line);
  appendFileSync(file, line.subarray(0, 20));
  assert.deepEqual(s.settle(id), { rolledForward: 1, cutBytes: 0 });
  assert.equal(decodeRecord(readFileSync(file)).record.segments.length, 2);
  // a forged claim that does not continue the chain is refused, never written
  const bad = encodeSegmentLine(3, d("forged"), exec("c"));
  writeFileSync(join(claims, toHex(parseDigest(segmentHead(h1, seg)))), bad);
  assert.throws(() => s.settle(id), code("BadRecord"));
  assert.equal(decodeRecord(readFileSync(file)).record.segments.length, 2);
});

const child = () => `
import { FileStore } from "${join(process.cwd(), "packages/host/src/store/index.ts")}";
const [root, id, head, name] = process.argv.slice(2);
const s = FileStore.open(root);
await new Promise((r) => setTimeout(r, Number(process.env.START_AT) - Date.now()));
try {
  await s.appendSegment(id, head, { kind: "executed", attestation: name });
  console.log("won");
} catch (e) { console.log(e.code); }
`;

test("concurrent appenders on one head: exactly one wins, the others get StaleHead or AppendConflict", async () => {
  const s = fresh();
  const id = await s.createRecord(UNIT, GRANTS);
  const script = join(s.root, "child.mts");
  writeFileSync(script, child());
  for (let round = 0; round < 2; round++) {
    const head = decodeRecord((await s.readRecordBytes(id))!).record.head;
    const start = String(Date.now() + 2500);
    const runs = [0, 1, 2].map(
      (i) =>
        new Promise<string>((res) => {
          const p = spawn(
            process.execPath,
            ["--import", "tsx", script, s.root, id, head, d(`w${round}-${i}`)],
            {
              cwd: process.cwd(),
              env: { ...process.env, START_AT: start },
            },
          );
          let out = "";
          p.stdout.on("data", (b: Buffer) => (out += b.toString()));
          p.stderr.on("data", (b: Buffer) => (out += b.toString()));
          p.on("close", () => res(out.trim()));
        }),
    );
    const results = await Promise.all(runs);
    assert.equal(results.filter((r) => r === "won").length, 1, results.join(","));
    assert.ok(
      results.every((r) => ["won", "StaleHead", "AppendConflict"].includes(r)),
      results.join(","),
    );
  }
  assert.equal(decodeRecord((await s.readRecordBytes(id))!).record.segments.length, 2);
  assert.ok(existsSync(recordPaths(s.root, id).claims));
});
