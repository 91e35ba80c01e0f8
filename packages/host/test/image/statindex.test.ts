// §14.9.4 The rootfs cache's stat index: a later use checks the tree by lstat alone; any change made
// through the filesystem (content with its times set back, a mode, a replaced file, a new or removed
// entry), another boot, a racy file whose bytes differ, or a record without an index makes the use
// hash the whole tree; a tree that then differs is RootfsMismatch and is rebuilt from the blobs.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isHostError } from "../../src/errors.ts";
import { ensureRootfs, importImage, ImageStore, verifyRootfs, type Rootfs } from "../../src/image/index.ts";
import { bootId, indexHolds, statWalk, type StatIndex } from "../../src/image/statindex.ts";
import { baseLayer, buildImage, upperLayer, writeLayout } from "./fixture.ts";

function code(fn: () => unknown): string {
  try {
    fn();
    return "ok";
  } catch (e) {
    if (isHostError(e)) return e.code;
    throw e;
  }
}

/** A store holding the test image with its rootfs unpacked; `fn` gets them; all removed after. */
function withRootfs(fn: (s: ImageStore, r: Rootfs) => void): void {
  const d = mkdtempSync(join(tmpdir(), "sbx-statindex-"));
  try {
    const img = buildImage([baseLayer(), upperLayer()]);
    writeLayout(img, join(d, "layout"), "sbx.test/busybox:1");
    const s = ImageStore.open(join(d, "store"), true);
    importImage(s, join(d, "layout"));
    const r = ensureRootfs(s, img.manifestHex);
    assert.notEqual(r.unpacked, null);
    fn(s, r);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

const howOf = (s: ImageStore, hex: string, full = false): string => {
  let how = "none";
  const tree = verifyRootfs(s, hex, { full, how: (c) => (how = c) });
  assert.notEqual(tree, null);
  return how;
};

const recordOf = (r: Rootfs) =>
  JSON.parse(readFileSync(`${r.dir}.json`, "utf8")) as { tree: string; index?: StatIndex };

test("stat index: a use after the unpack is checked by the index; --full (sbx image verify) hashes; the index is of this boot", () => {
  withRootfs((s, r) => {
    const rec = recordOf(r);
    assert.equal(rec.tree, r.tree);
    assert.equal(rec.index?.boot, bootId());
    assert.equal(howOf(s, r.manifestHex), "index");
    assert.equal(ensureRootfs(s, r.manifestHex).unpacked, null);
    assert.equal(howOf(s, r.manifestHex, true), "hashed");
    assert.equal(howOf(s, r.manifestHex), "index");
    // An index of another boot (a crash, a power loss since) is not trusted: the tree is hashed once.
    writeFileSync(
      `${r.dir}.json`,
      JSON.stringify({ ...recordOf(r), index: { ...recordOf(r).index, boot: "other" } }),
    );
    assert.equal(howOf(s, r.manifestHex), "hashed");
    assert.equal(howOf(s, r.manifestHex), "index");
    // A record of the older form (no index) is hashed, then indexed.
    writeFileSync(`${r.dir}.json`, JSON.stringify({ tree: r.tree }));
    assert.equal(howOf(s, r.manifestHex), "hashed");
    assert.equal(howOf(s, r.manifestHex), "index");
  });
});

test("stat index: same-size content with its times set back, a mode, a new entry are found and rebuilt; a same-bytes copy is re-indexed", () => {
  withRootfs((s, r) => {
    const hex = r.manifestHex;
    const passwd = join(r.dir, "etc/passwd");
    const st = lstatSync(passwd, { bigint: true });
    const text = readFileSync(passwd, "utf8");
    const ref = join(s.dir, "times-ref");
    assert.equal(spawnSync("touch", ["-r", passwd, ref]).status, 0);
    writeFileSync(passwd, text.replace("vscode", "evil00"));
    assert.equal(spawnSync("touch", ["-r", ref, passwd]).status, 0, "mtime set back to the ns");
    assert.equal(lstatSync(passwd, { bigint: true }).size, st.size);
    assert.equal(lstatSync(passwd, { bigint: true }).mtimeNs, st.mtimeNs);
    assert.equal(
      code(() => verifyRootfs(s, hex)),
      "RootfsMismatch",
    );
    const again = ensureRootfs(s, hex);
    assert.notEqual(again.unpacked, null, "rebuilt from the blobs");
    assert.equal(readFileSync(passwd, "utf8"), text);

    chmodSync(join(r.dir, "bin/busybox"), 0o777);
    assert.equal(
      code(() => verifyRootfs(s, hex)),
      "RootfsMismatch",
    );
    ensureRootfs(s, hex);

    writeFileSync(join(r.dir, "opt/planted"), "x");
    assert.equal(
      code(() => verifyRootfs(s, hex)),
      "RootfsMismatch",
    );
    ensureRootfs(s, hex);

    // The same bytes under a new inode (a copy, times kept): hashed, found equal, re-indexed.
    const motd = join(r.dir, "opt/new");
    const m = lstatSync(motd);
    copyFileSync(motd, `${motd}.tmp`);
    chmodSync(`${motd}.tmp`, m.mode & 0o7777);
    utimesSync(`${motd}.tmp`, m.atime, m.mtime);
    renameSync(`${motd}.tmp`, motd);
    assert.equal(howOf(s, hex), "hashed");
    assert.equal(howOf(s, hex), "index");
  });
});

test("stat index: a racy file's bytes are compared at every use", () => {
  withRootfs((s, r) => {
    // An index taken as if every file were racy (at = 20 ms after the epoch): each file's sha256 kept.
    const all = statWalk(r.dir, 0n);
    assert.ok(Object.keys(all.racy).includes("etc/passwd"));
    const index: StatIndex = { boot: bootId(), at: "20000000", stat: all.stat, racy: all.racy };
    assert.equal(indexHolds(r.dir, index), true);
    const wrong = { ...all.racy, "etc/passwd": "0".repeat(64) };
    assert.equal(indexHolds(r.dir, { ...index, racy: wrong }), false);
    const fewer: Record<string, string> = { ...all.racy };
    delete fewer["etc/passwd"];
    assert.equal(indexHolds(r.dir, { ...index, racy: fewer }), false);
    assert.equal(indexHolds(r.dir, { ...index, boot: "" }), false);
    // Such an index in the record: the use compares the bytes and holds.
    writeFileSync(`${r.dir}.json`, JSON.stringify({ tree: r.tree, index }));
    assert.equal(howOf(s, r.manifestHex), "index");
    writeFileSync(`${r.dir}.json`, JSON.stringify({ tree: r.tree, index: { ...index, racy: wrong } }));
    assert.equal(howOf(s, r.manifestHex), "hashed");
  });
});
