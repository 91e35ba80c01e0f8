// `sbx export --move` (sandbox-attest §13.2a, §13.13): a parked run handed off from store A to store
// B through the real binary. B resumes it from exactly the head handed off; A refuses to resume,
// suspend or close it (`RunMoved`, naming where) and to import it back, so one run id can no longer
// carry two different closed histories (issue 30, defect 4). Without --move, export says on stderr
// that the source stays resumable. The same on the PostgreSQL store as the source.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { readArchive } from "@sbx/host/archive";
import { PgStore } from "@sbx/host/pg";
import { testDb, type TestDb } from "../../host/test/pg/pgtest.ts";
import { FINISH_AGENT, kinds, sbx, startAgentRun, workspaceWithAgent } from "./lifecycle-helpers.ts";

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

const scratch = (): string => mkdtempSync(join("/var/tmp", "sbx-move-"));

// The record the archive carries, decoded.
function archivedRecord(tar: string) {
  const members = readArchive(readFileSync(tar), { maxMembers: 10_000, maxMemberBytes: 1 << 26 });
  const rec = members.find((m) => m.name.startsWith("record/"));
  assert.ok(rec, "the archive holds a record");
  return decodeRecord(rec.data).record;
}

async function refusedMoved(args: string[], env: Record<string, string> = {}): Promise<void> {
  const r = await sbx(args, env);
  assert.equal(r.code, 1, `${args.join(" ")}: ${r.out}${r.err}`);
  assert.match(r.err, /RunMoved/, args.join(" "));
  assert.match(r.err, /store B/, `${args.join(" ")} names where the run went`);
}

test("export --move to store B: B resumes from the head handed off; A refuses resume, suspend, close, import (RunMoved)", async () => {
  const dir = scratch();
  try {
    const a = join(dir, "storeA");
    const b = join(dir, "storeB");
    const id = await startAgentRun({ store: a, ws: workspaceWithAgent(join(dir, "ws")) });
    const s = await sbx(["suspend", id, "--release", "--store", a]);
    assert.equal(s.code, 0, s.err);
    const keyA = join(a, "host-key.pub.pem");

    // Without --move: the archive is written and the source is said to stay resumable.
    const copy = await sbx(["export", id, "--store", a, "--out", join(dir, "copy.tar")]);
    assert.equal(copy.code, 0, copy.err);
    assert.match(copy.err, /stays resumable/);
    assert.deepEqual(await kinds(a, id), ["executed", "suspended"]);

    const tar = join(dir, "moved.tar");
    const mv = await sbx(["export", id, "--store", a, "--move", "store B", "--out", tar]);
    assert.equal(mv.code, 0, mv.err);
    assert.doesNotMatch(mv.err, /stays resumable/);
    assert.deepEqual(await kinds(a, id), ["executed", "suspended", "moved"]);
    const held = decodeRecord(readFileSync(join(a, "records", `${id.slice(7)}.runrecord`))).record;
    const handed = held.heads[2]!;
    const mark = held.segments[2]!;
    assert.equal(mark.kind === "moved" && mark.head, handed, "the mark names the head handed off");
    assert.equal(mark.kind === "moved" && mark.to, "store B");
    // The archive carries the record at exactly the head handed off, and is written again the same.
    assert.equal(archivedRecord(tar).head, handed);
    const again = await sbx(["export", id, "--store", a, "--out", join(dir, "again.tar")]);
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(readFileSync(join(dir, "again.tar")), readFileSync(tar));
    assert.equal((await sbx(["export", id, "--store", a, "--move", "elsewhere"])).code, 1, "moved once");

    // sbx verify, runs and show on A show the hand-off.
    const v = await sbx(["verify", id, "--store", a, "--trust", keyA]);
    assert.equal(v.code, 0, v.out + v.err);
    assert.match(v.out, /moved +moved to "store B", head handed off blake3:/);
    assert.match(v.out, /verdict: VALID/);
    const runs = await sbx(["runs", "--store", a, "--json"]);
    const [row] = JSON.parse(runs.out) as { phase: string; moved_to: string }[];
    assert.deepEqual([row?.phase, row?.moved_to], ["moved", "store B"]);
    const show = await sbx(["show", id, "--store", a]);
    assert.match(show.out, /moved to "store B" at head blake3:/);

    // B accepts the run and resumes it from the head handed off.
    const im = await sbx(["import", tar, "--store", b, "--trust", keyA]);
    assert.equal(im.code, 0, im.err);
    assert.deepEqual(await kinds(b, id), ["executed", "suspended"]);
    const ok = await sbx(["resume", id, "--store", b, ...FINISH_AGENT]);
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /did step 5/);
    const onB = decodeRecord(readFileSync(join(b, "records", `${id.slice(7)}.runrecord`))).record;
    assert.equal(onB.heads[2], handed, "B continued from the head handed off");
    assert.equal((await sbx(["close", id, "--store", b])).code, 0);

    // A: every way of continuing the run is refused, naming where it went; nothing is appended.
    await refusedMoved(["resume", id, "--store", a, ...FINISH_AGENT]);
    await refusedMoved(["close", id, "--store", a]);
    await refusedMoved(["suspend", id, "--store", a]);
    await refusedMoved(["import", tar, "--store", a, "--trust", keyA]);
    assert.deepEqual(await kinds(a, id), ["executed", "suspended", "moved"]);
    // The repro: one id, two different closed histories. Only B's is closed.
    assert.deepEqual(await kinds(b, id), ["executed", "suspended", "resumed", "executed", "closed"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

async function kindsIn(url: string, id: Digest): Promise<string[]> {
  const s = await PgStore.open(url);
  try {
    const bytes = await s.readRecordBytes(id);
    return bytes === null ? [] : decodeRecord(bytes).record.segments.map((x) => x.kind);
  } finally {
    await s.close();
  }
}

test("export --move from the PostgreSQL store: the database refuses to continue the run (RunMoved)", async () => {
  const dir = scratch();
  const hostA = { SBX_STORE: db.url, SBX_LOCAL_DIR: join(dir, "hostA") };
  try {
    const id = await startAgentRun({ ws: workspaceWithAgent(join(dir, "ws")), env: hostA });
    assert.equal((await sbx(["suspend", id, "--release"], hostA)).code, 0);
    const tar = join(dir, "moved.tar");
    const mv = await sbx(["export", id, "--move", "store B", "--out", tar], hostA);
    assert.equal(mv.code, 0, mv.err);
    assert.deepEqual(await kindsIn(db.url, id), ["executed", "suspended", "moved"]);
    await refusedMoved(["resume", id, ...FINISH_AGENT], hostA);
    await refusedMoved(["close", id], hostA);
    const keyA = join(hostA.SBX_LOCAL_DIR, "host-key.pub.pem");
    await refusedMoved(["import", tar, "--trust", keyA], hostA);
    assert.deepEqual(await kindsIn(db.url, id), ["executed", "suspended", "moved"]);
    const b = join(dir, "storeB");
    const im = await sbx(["import", tar, "--store", b, "--trust", keyA]);
    assert.equal(im.code, 0, im.err);
    const ok = await sbx(["resume", id, "--store", b, ...FINISH_AGENT]);
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /did step 5/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
