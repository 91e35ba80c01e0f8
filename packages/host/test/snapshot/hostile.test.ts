// Snapshots, restores and watches over a workspace a running unit still controls (§13.8, §12): a
// process swapping entries for links to host secrets never gets a secret's bytes or digest copied
// out; entries vanishing mid-walk give a result or a coded refusal, never a raw OS error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes, utf8 } from "@sbx/wire";
import { Journal } from "@sbx/sandbox-attest/journal";
import { parseFsDir } from "@sbx/sandbox-attest/runrecord";
import { isHostError } from "../../src/errors.ts";
import { FileStore } from "../../src/store/index.ts";
import { restoreSnapshot, snapshotDir, verifyStoredTree } from "../../src/snapshot/index.ts";
import { journalWrites, scanFiles } from "../../src/run/files.ts";
import { writeFilesAt } from "../../src/fsat/index.ts";

const scratch = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

// The swapper: renames a link to the secret over `f` (and over directory `d`), then a plain file
// (directory) back, as fast as it can, until killed.
const SWAPPER = `
const fs = require("node:fs");
const [ws, secretFile, secretDir] = process.argv.slice(1);
const p = (n) => ws + "/" + n;
for (let i = 0; ; i++) {
  try {
    fs.symlinkSync(secretFile, p("l" + i)); fs.renameSync(p("l" + i), p("f"));
    fs.writeFileSync(p("w" + i), "plain"); fs.renameSync(p("w" + i), p("f"));
    fs.symlinkSync(secretDir, p("m" + i)); fs.rmSync(p("d"), { recursive: true, force: true }); fs.renameSync(p("m" + i), p("d"));
    fs.rmSync(p("d")); fs.mkdirSync(p("d")); fs.writeFileSync(p("d/g"), "plain g");
  } catch {}
}`;

function hostSecrets(): { file: string; dir: string; digests: Set<string> } {
  const dir = mkdtempSync(join(scratch, "sbx-secret-"));
  const text = `HOST SECRET KEY ${process.pid} ${Date.now()}`;
  writeFileSync(join(dir, "key"), text);
  writeFileSync(join(dir, "g"), text + " (dir)");
  return {
    file: join(dir, "key"),
    dir,
    digests: new Set([digestBytes(utf8(text)), digestBytes(utf8(text + " (dir)"))]),
  };
}

function startSwapper(ws: string, s: { file: string; dir: string }): ChildProcess {
  return spawn(process.execPath, ["-e", SWAPPER, ws, s.file, s.dir], { stdio: "ignore" });
}

function storeHolds(store: FileStore, digests: Set<string>): string[] {
  return [...digests].filter((d) => existsSync(store.objectPath(d as never)));
}

test("a process swapping links to host secrets during 1,000 snapshots gets nothing copied out", async () => {
  const secret = hostSecrets();
  const ws = mkdtempSync(join(scratch, "sbx-ws-"));
  writeFileSync(join(ws, "f"), "plain");
  mkdirSync(join(ws, "d"));
  const store = FileStore.open(mkdtempSync(join(scratch, "sbx-st-")), { create: true });
  const swapper = startSwapper(ws, secret);
  await new Promise((r) => setTimeout(r, 200));
  const kinds = new Map<string, number>();
  try {
    for (let i = 0; i < 1000; i++) {
      let root;
      try {
        root = snapshotDir(store, ws).fs_root;
      } catch (e) {
        assert.ok(isHostError(e, "WorkspaceChanged"), `snapshot ${i}: ${String(e)}`);
        continue;
      }
      verifyStoredTree(store, root);
      for (const e of parseFsDir(store.getObjectSync(root)!).entries) {
        const k = `${e.name}:${e.kind}`;
        kinds.set(k, (kinds.get(k) ?? 0) + 1);
      }
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
  } finally {
    swapper.kill("SIGKILL");
  }
  assert.deepEqual(storeHolds(store, secret.digests), [], "a host secret was copied into the store");
  assert.ok((kinds.get("f:symlink") ?? 0) > 0 && (kinds.get("f:file") ?? 0) > 0, "the swapper really raced");
  rmSync(ws, { recursive: true, force: true });
});

test("sbx run --watch: a swapping process never gets a secret's digest journaled", async () => {
  const secret = hostSecrets();
  const ws = mkdtempSync(join(scratch, "sbx-watch-"));
  writeFileSync(join(ws, "f"), "plain");
  mkdirSync(join(ws, "d"));
  const swapper = startSwapper(ws, secret);
  await new Promise((r) => setTimeout(r, 200));
  try {
    for (let i = 0; i < 300; i++) {
      const journal = new Journal();
      journalWrites(journal, ws, new Map());
      for (const ev of journal.events) {
        const digest = (ev as { digest?: string }).digest;
        assert.ok(digest === undefined || !secret.digests.has(digest), `round ${i}: secret digest journaled`);
      }
    }
  } finally {
    swapper.kill("SIGKILL");
  }
  assert.ok(scanFiles(ws).size >= 0);
});

test("files vanishing during the walk give a result or a coded refusal, never a raw error", async () => {
  const ws = mkdtempSync(join(scratch, "sbx-ws-"));
  const churn = spawn(
    process.execPath,
    [
      "-e",
      `const fs=require("node:fs");const w=process.argv[1];
      for(let i=0;;i++){try{const d=w+"/x"+(i%5);fs.mkdirSync(d,{recursive:true});
      for(let j=0;j<20;j++)fs.writeFileSync(d+"/y"+j,"z".repeat(j*10));
      fs.rmSync(w+"/x"+((i+2)%5),{recursive:true,force:true});}catch{}}`,
      ws,
    ],
    { stdio: "ignore" },
  );
  const store = FileStore.open(mkdtempSync(join(scratch, "sbx-st-")), { create: true });
  await new Promise((r) => setTimeout(r, 200));
  let ok = 0;
  try {
    for (let i = 0; i < 300; i++) {
      try {
        verifyStoredTree(store, snapshotDir(store, ws).fs_root);
        ok++;
      } catch (e) {
        assert.ok(isHostError(e, "WorkspaceChanged"), `snapshot ${i}: ${String(e)}`);
      }
    }
  } finally {
    churn.kill("SIGKILL");
  }
  assert.ok(ok > 0);
});

test("restore never writes through a link, and a failed restore leaves nothing behind", () => {
  const ws = mkdtempSync(join(scratch, "sbx-ws-"));
  const outside = mkdtempSync(join(scratch, "sbx-outside-"));
  // a link named like a later file: restore creates the link, then must not write through it
  symlinkSync(join(outside, "victim"), join(ws, "a"));
  writeFileSync(join(ws, "b"), "payload");
  const store = FileStore.open(mkdtempSync(join(scratch, "sbx-st-")), { create: true });
  const { fs_root } = snapshotDir(store, ws);
  const parent = mkdtempSync(join(scratch, "sbx-rs-"));
  restoreSnapshot(store, fs_root, join(parent, "out"));
  assert.equal(readFileSync(join(parent, "out", "b"), "utf8"), "payload");
  assert.equal(existsSync(join(outside, "victim")), false);
  // corrupt b's object: the restore fails with its code and leaves neither the target nor a temp
  const bAddr = digestBytes(utf8("payload"));
  rmSync(store.objectPath(bAddr));
  writeFileSync(store.objectPath(bAddr), "tampered");
  const parent2 = mkdtempSync(join(scratch, "sbx-rs-"));
  assert.throws(
    () => restoreSnapshot(store, fs_root, join(parent2, "out")),
    (e) => (e as { code?: string }).code === "ObjectMismatch",
  );
  assert.deepEqual(readdirSync(parent2), [], "a failed restore left a partial tree behind");
  // a file as the target, and a target path past PATH_MAX: coded refusals
  writeFileSync(join(parent2, "file"), "x");
  assert.throws(
    () => restoreSnapshot(store, fs_root, join(parent2, "file")),
    (e) => isHostError(e, "RestoreTargetNotEmpty"),
  );
  const long = join(
    parent2,
    ..."d"
      .repeat(250)
      .repeat(20)
      .match(/.{1,200}/g)!,
  );
  assert.throws(
    () => restoreSnapshot(store, fs_root, long),
    (e) => isHostError(e, "RestoreFailed"),
  );
});

test("sbx run --out into the workspace: a planted link is replaced, never written through", () => {
  const ws = mkdtempSync(join(scratch, "sbx-ws-"));
  const outside = mkdtempSync(join(scratch, "sbx-outside-"));
  writeFileSync(join(outside, "host-file"), "host");
  mkdirSync(join(ws, "out"));
  symlinkSync(join(outside, "host-file"), join(ws, "out", "stdout"));
  writeFilesAt(join(ws, "out"), [{ name: "stdout", bytes: utf8("unit output") }]);
  assert.equal(readFileSync(join(outside, "host-file"), "utf8"), "host");
  assert.equal(readFileSync(join(ws, "out", "stdout"), "utf8"), "unit output");
  // a directory component that is a link is refused
  symlinkSync(outside, join(ws, "out2"));
  assert.throws(
    () => writeFilesAt(join(ws, "out2"), [{ name: "x", bytes: utf8("x") }]),
    (e) => isHostError(e, "UnsafePath"),
  );
  assert.equal(existsSync(join(outside, "x")), false);
});
