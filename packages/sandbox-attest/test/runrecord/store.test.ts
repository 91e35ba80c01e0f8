import { test } from "node:test";
import assert from "node:assert/strict";
import { isSandboxAttestError } from "../../src/errors.ts";
import { MemoryStore, readRun, resumeRun } from "../../src/store/index.ts";
import type { EnvironmentCheck } from "../../src/runrecord/index.ts";
import { d, exec, FORK, GRANTS, resume, SNAP, suspend, UNIT } from "./fixtures.ts";
import type { Segment } from "../../src/runrecord/index.ts";

const anyEnv: EnvironmentCheck = { satisfies: () => true };
const idle = { uj: "500", provenance: "estimated" as const, source: "model:x", basis: { w: "1" } };

async function parked(): Promise<[MemoryStore, ReturnType<typeof d>]> {
  const s = new MemoryStore();
  const id = await s.createRecord(UNIT, GRANTS);
  const h1 = await s.appendSegment(id, id, exec("a"));
  await s.appendSegment(id, h1, suspend(10));
  return [s, id];
}

test("resume from the store appends a resumed segment after every precondition", async () => {
  const [s, id] = await parked();
  await resumeRun(s, id, { offered: SNAP, env: anyEnv, idle, atMs: 20 });
  const r = await readRun(s, id);
  assert.equal(r.phase, "active");
  assert.equal(r.segments.length, 3);
});

test("resume preconditions refuse with stable codes", async () => {
  const [s, id] = await parked();
  const code = (c: string) => (e: unknown) => isSandboxAttestError(e) && e.code === c;
  await assert.rejects(
    resumeRun(s, id, { offered: FORK, env: anyEnv, idle, atMs: 20 }),
    code("SnapshotMismatch"),
  );
  await assert.rejects(
    resumeRun(s, id, { offered: SNAP, env: { satisfies: (m) => m !== SNAP.manifest }, idle, atMs: 20 }),
    code("EnvironmentMismatch"),
  );
  await resumeRun(s, id, { offered: SNAP, env: anyEnv, idle, atMs: 20 });
  await assert.rejects(
    resumeRun(s, id, { offered: SNAP, env: anyEnv, idle, atMs: 30 }),
    code("PhaseViolation"),
  );
  await assert.rejects(s.appendSegment(id, id, exec("late")), code("StaleHead"));
  await assert.rejects(s.createRecord(UNIT, GRANTS), code("RecordExists"));
  await assert.rejects(readRun(s, d("nothing")), code("RecordMissing"));
});

test("objects are content-addressed and checked on read", async () => {
  const s = new MemoryStore();
  const a = await s.putObject(new Uint8Array([1, 2, 3]));
  assert.deepEqual(await s.getObject(a), new Uint8Array([1, 2, 3]));
  assert.equal(await s.getObject(d("absent")), null);
});

test("a store refuses a segment no reader could decode: estimated idle energy without its basis", async () => {
  const [s, id] = await parked();
  const head = (await readRun(s, id)).head;
  const bare = { ...resume(20, "500") } as Record<string, unknown>;
  delete bare["idle_basis"];
  await assert.rejects(
    s.appendSegment(id, head, bare as unknown as Segment),
    (e: unknown) => isSandboxAttestError(e) && e.code === "BadSegment",
  );
  // An unknown member is refused the same way, and nothing was appended by either attempt.
  await assert.rejects(
    s.appendSegment(id, head, { ...exec("b"), extra: 1 } as unknown as Segment),
    (e: unknown) => isSandboxAttestError(e) && e.code === "BadSegment",
  );
  assert.equal((await readRun(s, id)).segments.length, 2);
});
