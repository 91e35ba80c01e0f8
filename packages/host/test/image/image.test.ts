// §14.9 The image store, import, unpack and the rootfs cache, on images this test builds itself from
// busybox-static: OCI layout, OCI archive and docker-save archive; whiteouts, links, modes; hostile
// layers refused by code; a cache that changed is rebuilt; the resume check.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ingestManifest, satisfies } from "@sbx/sandbox-attest/manifest";
import { isHostError } from "../../src/errors.ts";
import {
  checkPinnedImage,
  ensureRootfs,
  offeredEnvironment,
  importImage,
  ImageStore,
  verifyRootfs,
} from "../../src/image/index.ts";
import {
  baseLayer,
  buildImage,
  BUSYBOX,
  dockerSave,
  ociArchive,
  sha256,
  upperLayer,
  writeLayout,
  type Entry,
} from "./fixture.ts";

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "sbx-image-"));
}

function flip(b: Buffer, at: number): void {
  b.writeUInt8(b.readUInt8(at) ^ 1, at);
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(isHostError(e), String(e));
    return e.code;
  }
  return "ok";
}

test("import: an OCI layout, an OCI archive and a docker-save archive of one image; same rootfs", () => {
  const d = tmp();
  try {
    const img = buildImage([baseLayer(), upperLayer()]);
    writeLayout(img, join(d, "layout"), "sbx.test/busybox:1");
    writeFileSync(join(d, "oci.tar"), ociArchive(img, "sbx.test/busybox:oci"));
    writeFileSync(join(d, "docker.tar"), dockerSave(img, "sbx.test/busybox-docker:1"));
    const s = ImageStore.open(join(d, "store"), true);
    const a = importImage(s, join(d, "layout"));
    assert.deepEqual(a, [{ name: "sbx.test/busybox", tag: "1", hex: img.manifestHex }]);
    assert.deepEqual(importImage(s, join(d, "oci.tar")), [
      { name: "sbx.test/busybox", tag: "oci", hex: img.manifestHex },
    ]);
    const [docker] = importImage(s, join(d, "docker.tar"));
    assert.equal(docker?.name, "sbx.test/busybox-docker");
    assert.equal(s.resolve("sbx.test/busybox-docker:1"), docker.hex);
    assert.equal(s.resolve("sbx.test/busybox:1"), img.manifestHex);
    assert.equal(s.resolve("sbx.test/busybox"), null, "no :latest was imported");
    // Every blob is stored under the sha256 of its bytes.
    for (const [h, b] of img.blobs) assert.equal(sha256(readFileSync(s.blobPath(h))), sha256(b));
    // The gzip layer (OCI) and the plain one (docker-save) unpack to the same tree.
    const r1 = ensureRootfs(s, img.manifestHex);
    const r2 = ensureRootfs(s, docker.hex);
    assert.equal(r1.tree, r2.tree);
    assert.deepEqual(r1.config.env.slice(0, 1), ["PATH=/usr/local/bin:/bin"]);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("import: a blob whose bytes are not its digest is refused and nothing is named", () => {
  const d = tmp();
  try {
    const img = buildImage([baseLayer(), upperLayer()]);
    writeLayout(img, join(d, "layout"), "sbx.test/bad:1");
    const layer = readFileSync(join(d, "layout/blobs/sha256", [...img.blobs.keys()][0] ?? ""));
    flip(layer, layer.length - 2048);
    writeFileSync(join(d, "layout/blobs/sha256", [...img.blobs.keys()][0] ?? ""), layer);
    const s = ImageStore.open(join(d, "store"), true);
    assert.equal(
      code(() => importImage(s, join(d, "layout"))),
      "ImageDigestMismatch",
    );
    assert.deepEqual(s.images(), []);
    // A docker-save layer that is not its config's diff_id.
    const tar = dockerSave(img, "sbx.test/bad-docker:1");
    const i = tar.indexOf(Buffer.from("bin/busybox"), 2048);
    flip(tar, i + 600);
    writeFileSync(join(d, "docker.tar"), tar);
    assert.equal(
      code(() => importImage(s, join(d, "docker.tar"))),
      "ImageDigestMismatch",
    );
    assert.deepEqual(s.images(), []);
    writeFileSync(join(d, "junk.tar"), "not a tar at all".repeat(100));
    assert.equal(
      code(() => importImage(s, join(d, "junk.tar"))),
      "ImageInvalid",
    );
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("unpack: whiteouts (file and opaque), hard and symbolic links, modes; setuid stripped", () => {
  const d = tmp();
  try {
    const img = buildImage([baseLayer(), upperLayer()]);
    writeLayout(img, join(d, "layout"), "sbx.test/busybox:1");
    const s = ImageStore.open(join(d, "store"), true);
    importImage(s, join(d, "layout"));
    const r = ensureRootfs(s, img.manifestHex);
    const at = (p: string) => join(r.dir, p);
    assert.equal(sha256(readFileSync(at("bin/busybox"))), sha256(readFileSync(BUSYBOX)));
    assert.equal(lstatSync(at("bin/bb-hard")).ino, lstatSync(at("bin/busybox")).ino, "hard link");
    assert.equal(readlinkSync(at("bin/sh")), "busybox");
    assert.equal(readlinkSync(at("lib")), "usr/lib");
    assert.equal(existsSync(at("etc/motd")), false, ".wh.motd removed the lower file");
    assert.equal(existsSync(at("opt/old")), false, "opaque whiteout hid the lower directory");
    assert.equal(existsSync(at("opt/keep")), false, "opaque whiteout hid the lower file");
    assert.equal(readFileSync(at("opt/new"), "utf8"), "new\n", "the upper layer's own entry stays");
    assert.equal(lstatSync(at("bin/suid")).mode & 0o7777, 0o755, "setuid stripped");
    assert.equal(r.unpacked?.stripped, 1);
    assert.equal(lstatSync(at("tmp")).mode & 0o7777, 0o1777);
    assert.equal(lstatSync(at("root")).mode & 0o7777, 0o700);
    assert.equal(lstatSync(at("usr/local/bin/hello")).mode & 0o777, 0o755);
    assert.equal(lstatSync(at("bin/busybox")).uid, 0, "owned by the host's root");
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

// Each hostile layer sits on top of the real base layer; the answer is the refusal's code.
const HOSTILE: [string, Entry[], string][] = [
  ["absolute name", [{ name: "/evil", kind: "file", body: "x" }], "LayerAbsolutePath"],
  ["a .. component", [{ name: "../evil", kind: "file", body: "x" }], "LayerPathEscapes"],
  ["a .. inside", [{ name: "etc/../../evil", kind: "file", body: "x" }], "LayerPathEscapes"],
  ["a .. directory", [{ name: "bin/../../", kind: "dir" }], "LayerPathEscapes"],
  [
    "a write through a symlink the layer made",
    [
      { name: "out", kind: "symlink", link: "/tmp" },
      { name: "out/planted", kind: "file", body: "x" },
    ],
    "LayerPathEscapes",
  ],
  [
    "a write through a symlink a lower layer made",
    [{ name: "lib/planted", kind: "file", body: "x" }],
    "LayerPathEscapes",
  ],
  [
    "a symlink climbing out",
    [{ name: "bin/escape", kind: "symlink", link: "../../etc/passwd" }],
    "LayerLinkEscapes",
  ],
  ["a symlink climbing out at the top", [{ name: "up", kind: "symlink", link: ".." }], "LayerLinkEscapes"],
  [
    "a hard link to an absolute name",
    [{ name: "hl", kind: "link", link: "/etc/passwd" }],
    "LayerLinkEscapes",
  ],
  ["a hard link climbing out", [{ name: "hl", kind: "link", link: "../etc/passwd" }], "LayerLinkEscapes"],
  ["a hard link to nothing", [{ name: "hl", kind: "link", link: "not/there" }], "LayerLinkEscapes"],
  ["a hard link through a symlink", [{ name: "hl", kind: "link", link: "lib/x" }], "LayerPathEscapes"],
  ["a FIFO", [{ name: "fifo", kind: "fifo" }], "LayerDeviceNode"],
  ["a whiteout with ..", [{ name: "../.wh.etc", kind: "file" }], "LayerPathEscapes"],
];

test("unpack: hostile layers are refused with a code, nothing is cached, nothing outside is touched", () => {
  const d = tmp();
  try {
    const s = ImageStore.open(join(d, "store"), true);
    const hostPasswd = readFileSync("/etc/passwd");
    for (const [i, [what, layer, want]] of HOSTILE.entries()) {
      const img = buildImage([baseLayer(), layer], "", false);
      const dir = join(d, `layout-${i}`);
      writeLayout(img, dir, `sbx.test/hostile:${i}`);
      importImage(s, dir);
      assert.equal(
        code(() => ensureRootfs(s, img.manifestHex)),
        want,
        `#${i} ${what}`,
      );
      assert.equal(existsSync(join(s.dir, "rootfs", img.manifestHex)), false, `#${i} ${what}: not cached`);
    }
    assert.deepEqual(readFileSync("/etc/passwd"), hostPasswd);
    assert.equal(existsSync("/tmp/planted"), false);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("unpack: device nodes are skipped and listed (as mmdebstrap's /dev has them); a FIFO names image and layer", () => {
  const d = tmp();
  try {
    const s = ImageStore.open(join(d, "store"), true);
    const devices: Entry[] = [
      { name: "dev", kind: "dir" },
      { name: "dev/console", kind: "char" },
      { name: "dev/sda", kind: "block" },
      // Over a file of the lower layer: the file is replaced by nothing, as an entry replaces it.
      { name: "etc/motd", kind: "char" },
    ];
    const img = buildImage([baseLayer(), devices], "", false);
    writeLayout(img, join(d, "layout"), "sbx.test/devices:1");
    importImage(s, join(d, "layout"));
    const r = ensureRootfs(s, img.manifestHex);
    assert.deepEqual(r.unpacked?.skipped, ["dev/console", "dev/sda", "etc/motd"]);
    assert.equal(existsSync(join(r.dir, "dev/console")), false);
    assert.equal(existsSync(join(r.dir, "etc/motd")), false);
    assert.equal(lstatSync(join(r.dir, "dev")).isDirectory(), true);
    const fifo = buildImage([baseLayer(), [{ name: "pipe", kind: "fifo" }]], "", false);
    writeLayout(fifo, join(d, "fifo"), "sbx.test/fifo:1");
    importImage(s, join(d, "fifo"));
    const layer = [...fifo.blobs.keys()][1] ?? "";
    assert.throws(
      () => ensureRootfs(s, fifo.manifestHex),
      (e) =>
        isHostError(e, "LayerDeviceNode") &&
        e.message.endsWith(`image sha256:${fifo.manifestHex} layer sha256:${layer}: entry pipe is a FIFO`),
    );
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("unpack: a layer whose bytes changed in the store is refused before anything of it is applied", () => {
  const d = tmp();
  try {
    const img = buildImage([baseLayer(), upperLayer()]);
    writeLayout(img, join(d, "layout"), "sbx.test/busybox:1");
    const s = ImageStore.open(join(d, "store"), true);
    importImage(s, join(d, "layout"));
    const base = [...img.blobs.keys()][0] ?? "";
    // Another well-formed tar under the base layer's name.
    const other = buildImage([[{ name: "x", kind: "file", body: "other" }]], "", false);
    writeFileSync(s.blobPath(base), other.layerTars[0] ?? Buffer.alloc(0));
    assert.equal(
      code(() => ensureRootfs(s, img.manifestHex)),
      "ImageDigestMismatch",
    );
    const check = checkPinnedImage(s, `sbx.test/busybox@sha256:${img.manifestHex}`);
    assert.equal(check.ok ? "ok" : check.code, "ImageDigestMismatch");
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("rootfs cache: the second use unpacks nothing; a tree that changed is found by digest and rebuilt", () => {
  const d = tmp();
  try {
    const img = buildImage([baseLayer(), upperLayer()]);
    writeLayout(img, join(d, "layout"), "sbx.test/busybox:1");
    const s = ImageStore.open(join(d, "store"), true);
    importImage(s, join(d, "layout"));
    const first = ensureRootfs(s, img.manifestHex);
    assert.notEqual(first.unpacked, null);
    const again = ensureRootfs(s, img.manifestHex);
    assert.equal(again.unpacked, null);
    assert.equal(again.tree, first.tree);
    appendFileSync(join(first.dir, "etc/passwd"), "evil:x:0:0::/:/bin/sh\n");
    assert.equal(
      code(() => verifyRootfs(s, img.manifestHex)),
      "RootfsMismatch",
    );
    const rebuilt = ensureRootfs(s, img.manifestHex);
    assert.notEqual(rebuilt.unpacked, null);
    assert.equal(rebuilt.tree, first.tree);
    assert.doesNotMatch(readFileSync(join(rebuilt.dir, "etc/passwd"), "utf8"), /evil/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("resume check: the pinned image held with the same bytes; missing or different is refused", () => {
  const d = tmp();
  try {
    const img = buildImage([baseLayer(), upperLayer()]);
    writeLayout(img, join(d, "layout"), "sbx.test/busybox:1");
    const s = ImageStore.open(join(d, "store"), true);
    importImage(s, join(d, "layout"));
    const ref = `elsewhere.example/any-name@sha256:${img.manifestHex}`;
    assert.deepEqual(checkPinnedImage(s, ref), { ok: true, hex: img.manifestHex });
    const empty = ImageStore.open(join(d, "empty"), true);
    const missing = checkPinnedImage(empty, ref);
    assert.equal(missing.ok ? "ok" : missing.code, "ImageNotInStore");
    const unpinned = checkPinnedImage(s, "sbx.test/busybox:1");
    assert.equal(unpinned.ok ? "ok" : unpinned.code, "ImageInvalid");
    // A layer gone from the store.
    rmSync(s.blobPath([...img.blobs.keys()][1] ?? ""));
    const gone = checkPinnedImage(s, ref);
    assert.equal(gone.ok ? "ok" : gone.code, "ImageNotInStore");
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("resume: the environment an image run offers satisfies its manifest (§14.7); a larger requirement does not", () => {
  const m = ingestManifest(
    `{"image": "sbx.test/busybox@sha256:${"a".repeat(64)}", "remoteUser": "vscode", "containerEnv": {"A": "1"}}`,
  );
  assert.deepEqual(satisfies(m, offeredEnvironment(m.environment), m.address), { ok: true });
  const big = ingestManifest(
    `{"image": "sbx.test/busybox@sha256:${"a".repeat(64)}", "hostRequirements": {"cpus": 4096}}`,
  );
  const r = satisfies(big, offeredEnvironment(big.environment), big.address);
  assert.equal(r.ok ? "ok" : r.code, "EnvironmentMismatch");
});

test("store: a lock left by a crashed import is taken over; index.json keeps every name", () => {
  const d = tmp();
  try {
    const img = buildImage([baseLayer(), upperLayer()]);
    writeLayout(img, join(d, "layout"), null);
    const s = ImageStore.open(join(d, "store"), true);
    importImage(s, join(d, "layout"), "sbx.test/a:1");
    writeFileSync(join(s.dir, "index.lock"), "");
    const old = new Date(Date.now() - 120_000);
    utimesSync(join(s.dir, "index.lock"), old, old);
    importImage(s, join(d, "layout"), "sbx.test/b:1");
    assert.deepEqual(
      s.images().map((i) => `${i.name}:${i.tag}`),
      ["sbx.test/a:1", "sbx.test/b:1"],
    );
    assert.equal(existsSync(join(s.dir, "index.lock")), false);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
