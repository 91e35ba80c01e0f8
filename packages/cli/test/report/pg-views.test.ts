// The reading commands on a PostgreSQL run store read each run straight from the database (issue 18):
// `sbx runs` lists runs verified from the shared store with output identical to the file store's
// listing of the same runs, copying nothing into a local store; `sbx verify RUN` walks the stored
// journals there too; `sbx report RUN` builds the same page as from the file store, and it opens
// VALID in headless Chromium. A journal node's chunk altered in the database: `sbx runs` lists that
// run INVALID with the code (the others stay valid), `sbx verify` exits 1 with the same code and the
// page shows INVALID with it. A record row altered in the database: the same code from `sbx runs`,
// `sbx verify` and `sbx report` (which refuses), and it is the code `sbx verify` gives for the same
// change in a file store.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addressOf, digestBytes, parseDigest, utf8 } from "@sbx/wire";
import { FileStore } from "@sbx/host/store";
import { copyStore, PgStore } from "@sbx/host/pg";
import { runCli } from "../../src/main.ts";
import type { RunBundle } from "../../src/report/bundle.ts";
import { checkRun } from "../../src/report/verify.ts";
import { sql, testDb, type TestDb } from "../../../host/test/pg/pgtest.ts";
import { fixtureRun } from "../../../host/test/store/fixture-run.ts";
import { launch, openReport, type Session } from "./browser.ts";
import { durableRun, HOST } from "./durable-run.ts";

let db: TestDb;
let session: Session | undefined;
before(async () => {
  db = await testDb();
  session = await launch("chromium");
});
after(async () => {
  await session?.close();
  await db.done();
});

async function sbx(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const DATA_OPEN = '<script type="application/json" id="sbx-data">';
function bundleOf(file: string): RunBundle {
  const html = readFileSync(file, "utf8");
  const i = html.indexOf(DATA_OPEN) + DATA_OPEN.length;
  return JSON.parse(html.slice(i, html.indexOf("</script>", i))) as RunBundle;
}

interface Row {
  id: string;
  valid: boolean;
  error: string | null;
}

test("sbx runs, verify and report read PostgreSQL directly, and agree with the file store", async () => {
  const dir = mkdtempSync(join("/var/tmp", "sbx-pg-views-"));
  const local = join(dir, "local");
  const before = process.env["SBX_LOCAL_DIR"];
  process.env["SBX_LOCAL_DIR"] = local;
  const durable = await durableRun();
  const fixture = await fixtureRun();
  try {
    // Three runs in one file store and the same three in the database: a durable run with its
    // journals kept, a run with none kept, and a run just created.
    const files = FileStore.open(join(dir, "files"), { create: true });
    await copyStore(durable.store, files);
    await copyStore(fixture.store, files);
    const fresh = await files.createRecord(addressOf({ views: "unit" }), digestBytes(utf8("views-grants")));
    const pg = await PgStore.open(db.url);
    try {
      await copyStore(files, pg);
    } finally {
      await pg.close();
    }
    const url = db.url;
    const ids = [durable.id, fixture.id, fresh].sort();

    // The listing: identical from both stores, every run valid.
    for (const args of [["--json"], []]) {
      const f = await sbx(["runs", "--store", files.root, ...args]);
      const p = await sbx(["runs", "--store", url, ...args]);
      assert.equal(f.code, 0, f.err);
      assert.equal(p.code, 0, p.err);
      assert.equal(p.out, f.out, "the same listing from PostgreSQL as from the file store");
    }
    const rows = JSON.parse((await sbx(["runs", "--store", url, "--json"])).out) as Row[];
    assert.deepEqual(
      rows.map((r) => r.id),
      ids,
    );
    assert.ok(rows.every((r) => r.valid));
    assert.equal(existsSync(local), false, "nothing mirrored into a local store");

    // verify RUN and show RUN from the database, journals walked there.
    const v = await sbx(["verify", durable.id, "--store", url, "--trust", HOST.did, "--json"]);
    assert.equal(v.code, 0, v.out + v.err);
    const vj = JSON.parse(v.out) as { valid: boolean; checked: { journals: number } };
    assert.equal(vj.checked.journals, 2);
    const fv = JSON.parse(
      (await sbx(["verify", durable.id, "--store", files.root, "--trust", HOST.did, "--json"])).out,
    ) as unknown;
    assert.deepEqual(JSON.parse(v.out), fv, "the same report as from the file store");
    const show = await sbx(["show", durable.id.slice(7, 20), "--store", url]);
    assert.equal(show.code, 0, show.err);
    assert.equal(show.out, (await sbx(["show", durable.id.slice(7, 20), "--store", files.root])).out);

    // The report: the same page as from the file store, VALID in Chromium.
    const fromPg = join(dir, "pg.html");
    const fromFiles = join(dir, "files.html");
    const rp = await sbx(["report", durable.id, "--store", url, "--trust", HOST.did, "--out", fromPg]);
    assert.equal(rp.code, 0, rp.err);
    const rf = await sbx([
      "report",
      durable.id,
      "--store",
      files.root,
      "--trust",
      HOST.did,
      "--out",
      fromFiles,
    ]);
    assert.equal(rf.code, 0, rf.err);
    assert.equal(readFileSync(fromPg, "utf8"), readFileSync(fromFiles, "utf8"), "the same page");
    const b = bundleOf(fromPg);
    for (const root of durable.journalRoots) assert.ok(b.objects[root] !== undefined, "journals embedded");
    const o = await openReport(session!.tab, fromPg);
    assert.deepEqual(o.fetched, []);
    assert.deepEqual(o.errors, []);
    assert.equal(o.verdict, "VALID");
    assert.equal(existsSync(local), false, "nothing mirrored into a local store");

    // export from the database carries the journals: imported into a fresh file store, both walked.
    const tar = join(dir, "run.tar");
    const ex = await sbx(["export", durable.id, "--store", url, "--out", tar]);
    assert.equal(ex.code, 0, ex.err);
    const imported = join(dir, "imported");
    const im = await sbx(["import", tar, "--store", imported, "--trust", HOST.did]);
    assert.equal(im.code, 0, im.err);
    const iv = await sbx(["verify", durable.id, "--store", imported, "--trust", HOST.did, "--json"]);
    assert.equal(iv.code, 0, iv.out);
    assert.equal((JSON.parse(iv.out) as { checked: { journals: number } }).checked.journals, 2);
    rmSync(local, { recursive: true, force: true }); // export's staging copy

    // A journal node altered in the database (its one chunk).
    const root = Buffer.from(parseDigest(durable.journalRoots[1]!));
    const found = await sql(url, "SELECT data FROM sbx_chunks WHERE address = $1", [root]);
    const data = (found.rows as { data: Buffer }[])[0]!.data;
    const flipped = Buffer.from(data);
    flipped[flipped.length - 1] = flipped[flipped.length - 1]! ^ 0x01;
    await sql(url, "UPDATE sbx_chunks SET data = $2 WHERE address = $1", [root, flipped]);
    const listed = await sbx(["runs", "--store", url, "--json"]);
    assert.equal(listed.code, 1, "some run does not verify");
    const byId = new Map((JSON.parse(listed.out) as Row[]).map((r) => [r.id, r]));
    assert.deepEqual(byId.get(durable.id), {
      ...byId.get(durable.id),
      valid: false,
      error: "ObjectMismatch",
    });
    assert.equal(byId.get(fixture.id)?.valid, true);
    assert.equal(byId.get(fresh)?.valid, true);
    const text = await sbx(["runs", "--store", url]);
    assert.match(text.out, /INVALID ObjectMismatch/);
    const bad = await sbx(["verify", durable.id, "--store", url, "--trust", HOST.did]);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /verdict: INVALID {2}ObjectMismatch/);
    const badPage = join(dir, "bad.html");
    assert.equal(
      (await sbx(["report", durable.id, "--store", url, "--trust", HOST.did, "--out", badPage])).code,
      0,
    );
    assert.equal(checkRun(bundleOf(badPage), [HOST.did]).error?.code, "ObjectMismatch");
    const ob = await openReport(session!.tab, badPage);
    assert.equal(ob.verdict, "INVALID");
    assert.equal(ob.code, "ObjectMismatch");
    await sql(url, "UPDATE sbx_chunks SET data = $2 WHERE address = $1", [root, data]);

    // A record row altered in the database (the fixture run's idle figure), and the same change made
    // to the file store's record: one code everywhere.
    const changed = await sql(
      url,
      "UPDATE sbx_segments SET line = convert_to(replace(convert_from(line, 'UTF8'), '\"idle_uj\":\"420000\"', '\"idle_uj\":\"42000\"'), 'UTF8') WHERE record = $1 AND position('\"idle_uj\":\"420000\"' in convert_from(line, 'UTF8')) > 0",
      [Buffer.from(parseDigest(fixture.id))],
    );
    assert.equal(changed.rowCount, 1);
    const path = files.recordPath(fixture.id);
    chmodSync(path, 0o644);
    writeFileSync(path, readFileSync(path, "utf8").replace('"idle_uj":"420000"', '"idle_uj":"42000"'));
    const fileCode = (
      JSON.parse((await sbx(["verify", path, "--trust", HOST.did, "--json"])).out) as {
        error: { code: string };
      }
    ).error.code;
    const rows2 = JSON.parse((await sbx(["runs", "--store", url, "--json"])).out) as Row[];
    const row = rows2.find((r) => r.id === fixture.id);
    assert.deepEqual([row?.valid, row?.error], [false, fileCode]);
    assert.ok(rows2.filter((r) => r.id !== fixture.id).every((r) => r.valid));
    const vr = await sbx(["verify", fixture.id, "--store", url, "--trust", HOST.did]);
    assert.equal(vr.code, 1);
    assert.match(vr.out, new RegExp(`verdict: INVALID {2}${fileCode}`));
    const rr = await sbx(["report", fixture.id, "--store", url, "--out", join(dir, "refused.html")]);
    assert.equal(rr.code, 1, "the report refuses a record the reader refuses");
    assert.match(rr.err, new RegExp(fileCode));
    assert.equal(existsSync(local), false, "nothing mirrored into a local store");
  } finally {
    if (before === undefined) delete process.env["SBX_LOCAL_DIR"];
    else process.env["SBX_LOCAL_DIR"] = before;
    rmSync(dir, { recursive: true, force: true });
    rmSync(durable.dir, { recursive: true, force: true });
  }
});
