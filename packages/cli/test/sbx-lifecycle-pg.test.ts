// Durable runs on the PostgreSQL store from the command line (issue 18): two hosts — two local
// folders (SBX_LOCAL_DIR), each with its own host key — sharing only the database. A run started on
// host A, suspended with --release (its snapshot streamed into the database), resumed and finished
// on host B (the snapshot streamed out, verified), closed; sbx verify VALID from either host with
// both keys trusted (and not with A's alone); runs, show, export and import on the database; a
// snapshot chunk altered in the database is refused and nothing is appended.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { digestBytes, parseDigest, utf8, type Digest } from "@sbx/wire";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { PgStore } from "@sbx/host/pg";
import { sql, testDb, type TestDb } from "../../host/test/pg/pgtest.ts";
import { FINISH_AGENT, sbx, startAgentRun, workspaceWithAgent } from "./lifecycle-helpers.ts";

let db: TestDb;
before(async () => {
  db = await testDb();
});
after(() => db.done());

async function kindsIn(url: string, id: Digest): Promise<string[]> {
  const s = await PgStore.open(url);
  try {
    const bytes = await s.readRecordBytes(id);
    return bytes === null ? [] : decodeRecord(bytes).record.segments.map((x) => x.kind);
  } finally {
    await s.close();
  }
}

test("two hosts, one database: run on A, suspend --release, resume and finish on B, verify from both", async () => {
  const dir = mkdtempSync(join("/var/tmp", "sbx-pg-lifecycle-"));
  const hostA = { SBX_STORE: db.url, SBX_LOCAL_DIR: join(dir, "hostA") };
  const hostB = { SBX_STORE: db.url, SBX_LOCAL_DIR: join(dir, "hostB") };
  try {
    const ws = workspaceWithAgent(join(dir, "ws"));
    const id = await startAgentRun({ ws, env: hostA });
    const s = await sbx(["suspend", id, "--release"], hostA);
    assert.equal(s.code, 0, s.err);
    assert.match(s.out, /released true/);
    assert.deepEqual(await kindsIn(db.url, id), ["executed", "suspended"]);

    // The chunk holding the agent's state ("2\n") altered in the database: B refuses, appends nothing.
    const chunk = Buffer.from(parseDigest(digestBytes(utf8("2\n"))));
    const altered = await sql(db.url, "UPDATE sbx_chunks SET data = $2 WHERE address = $1", [
      chunk,
      Buffer.from("3\n"),
    ]);
    assert.equal(altered.rowCount, 1);
    const refused = await sbx(["resume", id], hostB);
    assert.equal(refused.code, 1, refused.err);
    assert.match(refused.err, /SnapshotMismatch|StoreCorrupt|ObjectMismatch/);
    assert.deepEqual(await kindsIn(db.url, id), ["executed", "suspended"]);
    await sql(db.url, "UPDATE sbx_chunks SET data = $2 WHERE address = $1", [chunk, Buffer.from("2\n")]);

    // Host B shares only the database: its restored workspace comes from the streamed snapshot.
    const ok = await sbx(["resume", id, ...FINISH_AGENT], hostB);
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /did step 3\ndid step 4\ndid step 5/);
    assert.deepEqual(await kindsIn(db.url, id), ["executed", "suspended", "resumed", "executed"]);
    const again = await sbx(["resume", id], hostA);
    assert.equal(again.code, 1);
    assert.match(again.err, /PhaseViolation/);
    const c = await sbx(["close", id], hostB);
    assert.equal(c.code, 0, c.err);
    assert.match(c.out, /outcome completed/);

    const keyA = join(hostA.SBX_LOCAL_DIR, "host-key.pub.pem");
    const keyB = join(hostB.SBX_LOCAL_DIR, "host-key.pub.pem");
    assert.notEqual(readFileSync(keyA, "utf8"), readFileSync(keyB, "utf8"));
    for (const host of [hostA, hostB]) {
      const v = await sbx(["verify", id, "--trust", keyA, "--trust", keyB], host);
      assert.equal(v.code, 0, v.out + v.err);
      assert.match(v.out, /verdict: VALID/);
    }
    const onlyA = await sbx(["verify", id, "--trust", keyA], hostB);
    assert.equal(onlyA.code, 1, onlyA.out);

    const runs = await sbx(["runs", "--json"], hostA);
    assert.equal(runs.code, 0, runs.err);
    const rows = JSON.parse(runs.out) as { id: string; phase: string; segments: number; valid: boolean }[];
    assert.deepEqual(
      rows.map((x) => [x.id, x.phase, x.segments, x.valid]),
      [[id, "closed", 5, true]],
    );
    const show = await sbx(["show", id.slice(7, 20)], hostB);
    assert.equal(show.code, 0, show.err);
    assert.match(show.out, /phase closed/);

    // export from the database; import into a folder store (verified whole) and back (already held).
    const tar = join(dir, "run.tar");
    const ex = await sbx(["export", id, "--out", tar], hostA);
    assert.equal(ex.code, 0, ex.err);
    const folder = join(dir, "folder-store");
    const im = await sbx(["import", tar, "--store", folder, "--trust", keyA, "--trust", keyB], hostA);
    assert.equal(im.code, 0, im.err);
    assert.match(im.out, /^imported: run /);
    const back = await sbx(["import", tar, "--trust", keyA, "--trust", keyB], hostB);
    assert.equal(back.code, 0, back.err);
    assert.match(back.out, /^already held: run /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
