// Large and deep workspaces (§13.8): whatever a suspend writes, a resume reads. A directory of
// 100,000 files (whose object is past the 16 MiB default parse limit) and a tree 1,000 directories
// deep (paths far past PATH_MAX) snapshot, verify and restore.
import { test } from "node:test";
import assert from "node:assert/strict";
import { closeSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileStore } from "../../src/store/index.ts";
import { restoreSnapshot, snapshotDir, verifyStoredTree } from "../../src/snapshot/index.ts";
import { createFileAt, listAt, mkdirAt, openDirAt, openRoot } from "../../src/fsat/index.ts";

const scratch = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

test(
  "a directory of 100,000 files with 47-byte names snapshots, verifies and restores",
  { timeout: 300_000 },
  () => {
    const ws = mkdtempSync(join(scratch, "sbx-wide-"));
    const name = (i: number) => `file-${String(i).padStart(6, "0")}-`.padEnd(47, "x");
    for (let i = 0; i < 100_000; i++) writeFileSync(join(ws, name(i)), String(i % 10));
    const store = FileStore.open(mkdtempSync(join(scratch, "sbx-st-")), { create: true });
    const snap = snapshotDir(store, ws);
    assert.equal(snap.files, 100_000);
    assert.ok(
      store.getObjectSync(snap.fs_root)!.length > 16 * 1024 * 1024,
      "the directory object is past 16 MiB",
    );
    assert.equal(verifyStoredTree(store, snap.fs_root).files, 100_000);
    const dest = join(mkdtempSync(join(scratch, "sbx-rs-")), "out");
    restoreSnapshot(store, snap.fs_root, dest);
    assert.equal(readdirSync(dest).length, 100_000);
    assert.equal(snapshotDir(store, dest).fs_root, snap.fs_root);
    rmSync(ws, { recursive: true, force: true });
    rmSync(dest, { recursive: true, force: true });
  },
);

// Builds and reads the deep tree by directory descriptor: its paths are too long for the kernel.
function buildDeep(root: string, depth: number): void {
  const fds = [openRoot(root)];
  for (let i = 0; i < depth; i++)
    fds.push(mkdirAt(fds.at(-1)!, `level-${String(i).padStart(4, "0")}`, 0o755));
  closeSync(createFileAt(fds.at(-1)!, "bottom", 0o644));
  for (const fd of fds) closeSync(fd);
}

function depthOf(root: string): number {
  let fd = openRoot(root);
  let depth = 0;
  for (;;) {
    const dirs = listAt(fd).filter((n) => n.toString().startsWith("level-"));
    if (dirs.length === 0) break;
    const next = openDirAt(fd, dirs[0]!)!;
    closeSync(fd);
    fd = next.fd;
    depth++;
  }
  const bottom = listAt(fd).map(String);
  closeSync(fd);
  return bottom.includes("bottom") ? depth : -1;
}

test("a tree 1,000 directories deep (paths past PATH_MAX) snapshots, verifies and restores", () => {
  const ws = mkdtempSync(join(scratch, "sbx-deep-"));
  buildDeep(ws, 1000);
  const store = FileStore.open(mkdtempSync(join(scratch, "sbx-st-")), { create: true });
  const snap = snapshotDir(store, ws);
  assert.deepEqual([snap.dirs, snap.files], [1001, 1]);
  assert.equal(verifyStoredTree(store, snap.fs_root).dirs, 1001);
  const dest = join(mkdtempSync(join(scratch, "sbx-rs-")), "out");
  restoreSnapshot(store, snap.fs_root, dest);
  assert.equal(depthOf(dest), 1000);
  assert.equal(snapshotDir(store, dest).fs_root, snap.fs_root);
});
