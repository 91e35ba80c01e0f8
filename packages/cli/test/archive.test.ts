// `sbx export` / `sbx import` (§13.10), `sbx runs`, `sbx show`: a run moved between stores, every
// byte of the archive tamper-checked, hostile archives refused with codes, and an import killed at
// every write step leaves the run either absent or whole; a durable run's journals (§13.7.3) go
// along as their trees' nodes and are verified on import.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  ftruncateSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalBytes, testKey, utf8 } from "@sbx/wire";
import { decodeRecord, isSandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { readStoredJournal } from "@sbx/sandbox-attest/journal";
import { isHostError } from "@sbx/host";
import { openRunArchive, readArchive, writeArchive } from "@sbx/host/archive";
import { FileStore, verifyRecordFiles } from "@sbx/host/store";
import { runCli } from "../src/main.ts";
import { fixtureRun } from "../../host/test/store/fixture-run.ts";
import { runIdOf, sbx as sbxBin } from "./lifecycle-helpers.ts";

const HOST = testKey("host").did;

async function sbx(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const tmp = () => mkdtempSync(join(tmpdir(), "sbx-ar-"));

test("export → import into a second store: verifies there, runs and show list it, re-import is a no-op", async () => {
  const run = await fixtureRun();
  const s1 = run.store.root;
  const list = await sbx(["runs", "--store", s1, "--json"]);
  assert.equal(list.code, 0, list.err);
  const [row] = JSON.parse(list.out) as { id: string; phase: string; segments: number; energy_uj: string }[];
  assert.equal(row?.segments, 5);
  assert.equal(row.energy_uj, "4420000");
  const shown = await sbx(["show", row.id.slice(7, 19), "--store", s1]);
  assert.equal(shown.code, 0, shown.err);
  assert.match(shown.out, /idle by provenance/);
  assert.match(shown.out, /objects: \d+ signed, \d+ plain/);
  assert.equal((await sbx(["show", "ffff", "--store", s1])).code, 2, "unknown run");
  // The unit descriptor, when the store holds it, travels with the run (a resuming host needs it).
  const unit = await run.store.putObject(canonicalBytes({ fixture: "unit" }));
  const archive = join(tmp(), "run.tar");
  const ex = await sbx(["export", row.id, "--store", s1, "--out", archive]);
  assert.equal(ex.code, 0, ex.err);
  const tarList = spawnSync("tar", ["tf", archive], { encoding: "utf8" });
  assert.equal(tarList.status, 0, "tar reads the archive");
  assert.match(tarList.stdout, /^sandbox\.runarchive\/1\nrecord\//);
  const s2 = join(tmp(), "store2");
  assert.equal((await sbx(["import", archive, "--store", s2, "--trust", testKey("other").did])).code, 1);
  assert.equal(
    existsSync(join(s2, "records")) && FileStore.open(s2).recordIds().length > 0,
    false,
    "nothing imported",
  );
  const im = await sbx(["import", archive, "--store", s2, "--trust", HOST, "--json"]);
  assert.equal(im.code, 0, im.err);
  const r = JSON.parse(im.out) as { id: string; created: boolean; signers: string[] };
  assert.equal(r.created, true);
  const store2 = FileStore.open(s2, { readOnly: true });
  const v = verifyRecordFiles(store2.recordPath(r.id as `blake3:${string}`), store2, { hosts: [HOST] });
  assert.equal(v.valid, true, v.error?.message);
  assert.equal(v.missing.length, 0);
  assert.notEqual(store2.getObjectSync(unit), null, "the unit descriptor was imported");
  const again = await sbx(["import", archive, "--store", s2, "--any-signer"]);
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /already held/);
});

test("a changed byte anywhere in the archive is refused with a code", async () => {
  const run = await fixtureRun();
  const id = run.store.recordIds()[0]!;
  const archive = join(tmp(), "run.tar");
  assert.equal((await sbx(["export", id, "--store", run.store.root, "--out", archive])).code, 0);
  const bytes = readFileSync(archive);
  openRunArchive(bytes, [HOST]);
  const codes = new Set<string>();
  for (let i = 0; i < bytes.length; i++) {
    const b = new Uint8Array(bytes);
    b[i]! ^= 0x01;
    assert.throws(
      () => openRunArchive(b, [HOST]),
      (e) =>
        (isHostError(e) || isSandboxAttestError(e) || (e as { code?: string }).code !== undefined) &&
        (codes.add((e as { code: string }).code), true),
      `byte ${i} changed, accepted`,
    );
  }
  assert.ok(codes.has("BadArchive") && codes.size > 2, [...codes].join(","));
});

test("hostile archives: traversal names, links, duplicates, extra members, oversize", async () => {
  const run = await fixtureRun();
  const id = run.store.recordIds()[0]!;
  const archive = join(tmp(), "run.tar");
  assert.equal((await sbx(["export", id, "--store", run.store.root, "--out", archive])).code, 0);
  const members = readArchive(readFileSync(archive), { maxMembers: 100, maxMemberBytes: 1 << 20 });
  const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
  const traversal = writeArchive([...members, { name: "../../etc/passwd", data: utf8("x") }]);
  assert.throws(() => openRunArchive(traversal), code("UnexpectedMember"));
  const dup = writeArchive([...members, members[2]!]);
  assert.throws(() => openRunArchive(dup), code("DuplicateMember"));
  const extra = writeArchive([...members, { name: `objects/${"0".repeat(64)}`, data: utf8("x") }]);
  assert.throws(() => openRunArchive(extra), code("ObjectMismatch"));
  const link = new Uint8Array(writeArchive(members));
  link[512 + 156] = "2".charCodeAt(0); // the record member's typeflag (after the empty format member): a symbolic link
  assert.throws(() => openRunArchive(link), code("BadArchive"));
  const missing = writeArchive(members.slice(0, -1));
  assert.throws(() => openRunArchive(missing), code("ArchiveIncomplete"));
  const big = join(tmp(), "big.tar");
  const fd = openSync(big, "w");
  ftruncateSync(fd, 1024 * 1024 * 1024 + 512);
  closeSync(fd);
  const r = await sbx(["import", big, "--store", join(tmp(), "s"), "--any-signer"]);
  assert.equal(r.code, 2, "refused from its size before reading");
  assert.match(r.err, /OversizeInput/);
});

test("import killed at every write step: the store reopens, the run is absent or whole, a retry imports it", async () => {
  const run = await fixtureRun();
  const id = run.store.recordIds()[0]!;
  const dir = process.env.SBX_CRASH_DIR ?? tmp();
  const archive = join(mkdtempSync(join(dir, "sbx-ar-")), "run.tar");
  assert.equal((await sbx(["export", id, "--store", run.store.root, "--out", archive])).code, 0);
  // The compiled bin (scripts/test.mjs builds it before the tests run).
  const bin = join(import.meta.dirname, "../bin/sbx.mjs");
  const sbxProc = (store: string, at: number) =>
    spawnSync(process.execPath, [bin, "import", archive, "--store", store, "--trust", HOST], {
      env: { ...process.env, SBX_STORE_CRASH_AT: String(at) },
      encoding: "utf8",
    });
  let killed = 0;
  for (let at = 1; ; at++) {
    const store = mkdtempSync(join(dir, "sbx-imp-"));
    const p = sbxProc(store, at);
    if (p.signal !== "SIGKILL") {
      assert.equal(p.status, 0, p.stderr);
      break;
    }
    killed++;
    const s = FileStore.open(store, { create: true });
    for (const rid of s.recordIds()) {
      const v = verifyRecordFiles(s.recordPath(rid), s, { hosts: [HOST] });
      assert.ok(v.valid && v.missing.length === 0, `step ${at}: a visible run is not whole`);
    }
    const retry = sbxProc(store, 0);
    assert.equal(retry.status, 0, `step ${at}: retry ${retry.stderr}`);
  }
  assert.ok(killed >= 5, `only ${killed} write steps`);
});

test("a durable run's journals travel in its archive as their trees' nodes, verified on import", async () => {
  const dir = tmp();
  const s1 = join(dir, "s1");
  const ws = join(dir, "ws");
  mkdirSync(ws);
  const ran = await sbxBin(["run", "--store", s1, "--workspace", ws, "--", "sh", "-c", "echo one; echo two"]);
  assert.equal(ran.code, 0, ran.err);
  const id = runIdOf(ran.out);
  const fs1 = FileStore.open(s1, { readOnly: true });
  const seg = decodeRecord((await fs1.readRecordBytes(id))!).record.segments[0];
  assert.equal(seg?.kind, "executed");
  const head = verifyAttestation(await fs1.getSigned(seg.attestation)).predicate.journal;
  const nodes: string[] = [];
  const kept = readStoredJournal({ root: head.root, size: head.events }, (a) => {
    nodes.push(a);
    return fs1.getObjectSync(a);
  });
  assert.ok(kept !== null && kept.length >= 2, "the store kept the interval's journal");
  const archive = join(dir, "run.tar");
  assert.equal((await sbx(["export", id, "--store", s1, "--out", archive])).code, 0);
  const members = readArchive(readFileSync(archive), { maxMembers: 10_000, maxMemberBytes: 1 << 24 });
  const nameOf = (a: string) => `objects/${a.slice("blake3:".length)}`;
  for (const a of nodes)
    assert.ok(
      members.some((m) => m.name === nameOf(a)),
      `node ${a} exported`,
    );
  // Imported: the second store holds the journal, read back and verified from the signed head.
  const s2 = join(dir, "s2");
  const im = await sbx(["import", archive, "--store", s2, "--trust", join(s1, "host-key.pub.pem")]);
  assert.equal(im.code, 0, im.err);
  const fs2 = FileStore.open(s2, { readOnly: true });
  const back = readStoredJournal({ root: head.root, size: head.events }, (a) => fs2.getObjectSync(a));
  assert.deepEqual(back, kept);
  // A node below the root left out: ObjectMissing; the root left out: its nodes are unreferenced.
  const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
  const without = (a: string) => writeArchive(members.filter((m) => m.name !== nameOf(a)));
  assert.throws(() => openRunArchive(without(nodes[1]!)), code("ObjectMissing"));
  assert.throws(() => openRunArchive(without(nodes[0]!)), code("UnexpectedMember"));
});
