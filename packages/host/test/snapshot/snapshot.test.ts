import { test } from "node:test";
import assert from "node:assert/strict";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  readdirSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { isSandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { isHostError } from "../../src/errors.ts";
import { FileStore } from "../../src/store/index.ts";
import { restoreSnapshot, snapshotDir, verifyStoredTree } from "../../src/snapshot/index.ts";

function workspace(): string {
  const w = mkdtempSync(join(tmpdir(), "sbx-ws-"));
  mkdirSync(join(w, "src/deep"), { recursive: true });
  writeFileSync(join(w, "README"), "hello\n");
  writeFileSync(join(w, "src/main.sh"), "#!/bin/sh\necho hi\n");
  chmodSync(join(w, "src/main.sh"), 0o755);
  writeFileSync(join(w, "src/deep/empty"), "");
  writeFileSync(join(w, "src/deep/big"), Buffer.alloc(3 << 20, 7));
  writeFileSync(join(w, "é-name"), "utf8 name");
  symlinkSync("../README", join(w, "src/link"));
  symlinkSync("/nonexistent/abs", join(w, "abs-link"));
  return w;
}

function listTree(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const n of readdirSync(join(dir, rel)).sort()) {
    const p = join(rel, n);
    const st = statSync(join(dir, p), { throwIfNoEntry: false });
    const l = readlinkSafe(join(dir, p));
    if (l !== null) out.push(`${p} -> ${l}`);
    else if (st?.isDirectory()) out.push(`${p}/ ${(st.mode & 0o777).toString(8)}`, ...listTree(dir, p));
    else
      out.push(
        `${p} ${(st!.mode & 0o777).toString(8)} ${readFileSync(join(dir, p)).toString("base64").slice(0, 40)}`,
      );
  }
  return out;
}
function readlinkSafe(p: string): string | null {
  try {
    return readlinkSync(p);
  } catch {
    return null;
  }
}

test("snapshot then restore reproduces the tree; the root is deterministic", () => {
  const w = workspace();
  const s1 = FileStore.open(mkdtempSync(join(tmpdir(), "sbx-st-")), { create: true });
  const s2 = FileStore.open(mkdtempSync(join(tmpdir(), "sbx-st-")), { create: true });
  const a = snapshotDir(s1, w);
  const b = snapshotDir(s2, w);
  assert.equal(a.fs_root, b.fs_root, "same tree, same root in two stores");
  assert.deepEqual([a.files, a.symlinks, a.dirs], [5, 2, 3]);
  const dest = join(mkdtempSync(join(tmpdir(), "sbx-rs-")), "out");
  restoreSnapshot(s1, a.fs_root, dest);
  assert.deepEqual(listTree(dest), listTree(w));
  assert.equal(snapshotDir(s1, dest).fs_root, a.fs_root, "the restored tree snapshots to the same root");
  const st = verifyStoredTree(s1, a.fs_root);
  assert.equal(st.files, 5);
  writeFileSync(join(w, "README"), "changed\n");
  assert.notEqual(snapshotDir(s1, w).fs_root, a.fs_root);
  rmSync(w, { recursive: true });
});

test("restore refuses a corrupted object and a non-empty target", () => {
  const w = workspace();
  const s = FileStore.open(mkdtempSync(join(tmpdir(), "sbx-st-")), { create: true });
  const { fs_root } = snapshotDir(s, w);
  assert.throws(
    () => restoreSnapshot(s, fs_root, w),
    (e) => isHostError(e, "RestoreTargetNotEmpty"),
  );
  // corrupt the 3 MiB file's object
  const big = s.putFileSync(join(w, "src/deep/big")).address;
  const p = s.objectPath(big);
  chmodSync(p, 0o644);
  const bytes = readFileSync(p);
  bytes[12345]! ^= 1;
  writeFileSync(p, bytes);
  assert.throws(
    () => restoreSnapshot(s, fs_root, join(tmpdir(), `sbx-rs-${process.pid}-x`)),
    (e) => isSandboxAttestError(e, "ObjectMismatch"),
  );
  assert.throws(
    () => verifyStoredTree(s, fs_root),
    (e) => isSandboxAttestError(e, "ObjectMismatch"),
  );
  rmSync(p);
  assert.throws(
    () => verifyStoredTree(s, fs_root),
    (e) => isSandboxAttestError(e, "ObjectMissing"),
  );
});

test("devices, FIFOs, sockets and setuid bits are refused", () => {
  const s = FileStore.open(mkdtempSync(join(tmpdir(), "sbx-st-")), { create: true });
  const w = mkdtempSync(join(tmpdir(), "sbx-ws-"));
  execFileSync("mkfifo", [join(w, "fifo")]);
  assert.throws(
    () => snapshotDir(s, w),
    (e) => isHostError(e, "UnsupportedFileKind"),
  );
  rmSync(join(w, "fifo"));
  writeFileSync(join(w, "suid"), "x");
  chmodSync(join(w, "suid"), 0o4755);
  assert.throws(
    () => snapshotDir(s, w),
    (e) => isHostError(e, "UnsupportedMode"),
  );
  rmSync(join(w, "suid"));
  writeFileSync(Buffer.concat([Buffer.from(w + "/"), Buffer.from([0xff, 0x41])]), "x");
  assert.throws(
    () => snapshotDir(s, w),
    (e) => isHostError(e, "UnsupportedName"),
  );
});
