// §13.8 The stat cache of a run's snapshots: an unchanged file is not read again; a changed one, a
// racy one, one whose object the store lost, or a cache of another boot is read again; a snapshot
// is one pack, sealed with a few fsyncs however many files it holds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes, parseDigest, toHex, utf8 } from "@sbx/wire";
import { FileStore } from "../../src/store/index.ts";
import { snapshotDir, verifyStoredTree } from "../../src/snapshot/index.ts";
import { removeObject } from "../store/tamper.ts";
import { tsxArgv } from "../support/worker.ts";

const RUN = digestBytes(utf8("statcache-run"));

function workspace(n: number): string {
  const ws = mkdtempSync(join(tmpdir(), "sbx-sc-ws-"));
  mkdirSync(join(ws, "d"));
  for (let i = 0; i < n; i++) writeFileSync(join(ws, "d", `f${i}`), `file ${i}\n`);
  return ws;
}

const settle = () => new Promise((r) => setTimeout(r, 60)); // past the racy slack (20 ms)

test("an unchanged file is taken from the run's stat cache unread; a changed one is read again", async () => {
  const ws = workspace(20);
  const store = FileStore.open(mkdtempSync(join(tmpdir(), "sbx-sc-")), { create: true });
  await settle();
  const first = snapshotDir(store, ws, { run: RUN });
  assert.equal(first.unread, 0);
  const second = snapshotDir(store, ws, { run: RUN });
  assert.deepEqual([second.fs_root, second.unread, second.files], [first.fs_root, 20, 20]);
  // The same size and mtime put back: the ctime moved, so the file is read and the root changes.
  const p = join(ws, "d", "f3");
  const st = statSync(p);
  writeFileSync(p, "FILE 3\n");
  utimesSync(p, st.atime, st.mtime);
  await settle();
  const third = snapshotDir(store, ws, { run: RUN });
  assert.equal(third.unread, 19);
  assert.notEqual(third.fs_root, first.fs_root);
  assert.equal(verifyStoredTree(store, third.fs_root).files, 20);
  // Without a run, nothing is cached.
  assert.equal(snapshotDir(store, ws).unread, 0);
});

test("racy files, objects the store lost and caches of another boot are read again", async () => {
  const ws = workspace(5);
  const root = mkdtempSync(join(tmpdir(), "sbx-sc-"));
  const store = FileStore.open(root, { create: true });
  const future = new Date(Date.now() + 3_600_000);
  utimesSync(join(ws, "d", "f0"), future, future); // mtime not older than the snapshot: racy
  await settle();
  const first = snapshotDir(store, ws, { run: RUN });
  assert.equal(snapshotDir(store, ws, { run: RUN }).unread, 4, "the racy file is read every time");
  removeObject(store, digestBytes(utf8("file 1\n")));
  const reopened = FileStore.open(root);
  const again = snapshotDir(reopened, ws, { run: RUN });
  assert.equal(again.unread, 3, "a file whose object is gone is read and stored again");
  assert.equal(again.fs_root, first.fs_root);
  assert.equal(verifyStoredTree(FileStore.open(root), again.fs_root).files, 5);
  const cache = join(root, "statcache", `${toHex(parseDigest(RUN))}.json`);
  const c = JSON.parse(readFileSync(cache, "utf8")) as { boot: string };
  writeFileSync(cache, JSON.stringify({ ...c, boot: "another-boot" }));
  assert.equal(
    snapshotDir(FileStore.open(root), ws, { run: RUN }).unread,
    0,
    "another boot's cache is no cache",
  );
});

test("a snapshot of 300 files is one pack, made durable with at most three fsyncs", () => {
  const ws = workspace(300);
  const root = mkdtempSync(join(tmpdir(), "sbx-sc-"));
  FileStore.open(root, { create: true });
  const child = join(import.meta.dirname, "snapshot-child.ts");
  const [node, ...argv] = tsxArgv(child, [root, ws]);
  const r = spawnSync(node!, argv, {
    env: { ...process.env, SBX_STORE_CRASH_TRACE: "1" },
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  const fsyncs = r.stderr.split("\n").filter((l) => / fsync/.test(l));
  assert.ok(fsyncs.length <= 3, `fsync steps: ${fsyncs.join("; ")}`);
  assert.equal(readdirSync(join(root, "packs")).length, 1);
  assert.deepEqual(readdirSync(join(root, "objects")), [], "no loose objects");
  assert.equal(verifyStoredTree(FileStore.open(root), r.stdout.trim() as never).files, 300);
});
