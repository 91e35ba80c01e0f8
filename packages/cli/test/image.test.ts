// `sbx image import`, `sbx manifest pin`, `sbx run --manifest FILE` (sandbox-attest §14.9): a busybox
// image built by the test, imported from an OCI layout and a docker-save archive, a devcontainer.json
// pinned to it, and runs whose user, env, workspace folder and limits are the manifest's; the same
// run without the image in the store is refused; the 72 real devcontainer files pinned to it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "../src/main.ts";
import {
  baseLayer,
  buildImage,
  dockerSave,
  upperLayer,
  writeLayout,
  type BuiltImage,
} from "../../host/test/image/fixture.ts";

async function sbx(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

let dir = "";
let store = "";
let img: BuiltImage;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "sbx-image-cli-"));
  store = join(dir, "images");
  img = buildImage([baseLayer(), upperLayer()]);
  writeLayout(img, join(dir, "layout"), null);
  writeFileSync(join(dir, "docker.tar"), dockerSave(img, "sbx.test/busybox-docker:1"));
  const a = await sbx([
    "image",
    "import",
    join(dir, "layout"),
    "--name",
    "sbx.test/busybox:1",
    "--images",
    store,
  ]);
  assert.equal(a.code, 0, a.err);
});

after(() => rmSync(dir, { recursive: true, force: true }));

test("image import prints name@sha256 of the manifest; an unnamed layout needs --name; image list", async () => {
  assert.equal(
    (await sbx(["image", "list", "--images", store])).out,
    `sbx.test/busybox:1\tsha256:${img.manifestHex}`,
  );
  const again = await sbx([
    "image",
    "import",
    join(dir, "layout"),
    "--name",
    "sbx.test/busybox:1",
    "--images",
    store,
  ]);
  assert.equal(again.out, `sbx.test/busybox@sha256:${img.manifestHex}`);
  const unnamed = await sbx(["image", "import", join(dir, "layout"), "--images", store]);
  assert.equal(unnamed.code, 2, "no name is a flag missing, not a malformed image");
  assert.match(unnamed.err, /ImageUnnamed: the image carries no name: name it with --name NAME\[:TAG\]/);
  const d = await sbx(["image", "import", join(dir, "docker.tar"), "--images", store, "--json"]);
  assert.equal(d.code, 0, d.err);
  const rows = JSON.parse(d.out) as { name: string; tag: string; reference: string }[];
  assert.equal(rows.length, 1);
  assert.match(rows[0]?.reference ?? "", /^sbx\.test\/busybox-docker@sha256:[0-9a-f]{64}$/);
  assert.equal((await sbx(["image", "import", join(dir, "missing.tar"), "--images", store])).code, 2);
  assert.equal((await sbx(["image", "import", "--images", store])).code, 2);
});

const DEVCONTAINER = `// written by the test
{
  "name": "busybox",
  "image": "sbx.test/busybox:1", // the tag the store knows
  "remoteUser": "vscode",
  "containerEnv": { "FROM_MANIFEST": "yes", "OVERRIDE_ME": "manifest" },
  "remoteEnv": { "UNSET_ME": null, "WS": "\${containerWorkspaceFolder}" },
  "workspaceFolder": "/workspaces/proj",
  "hostRequirements": { "cpus": 1, "memory": "536870912" },
  "customizations": { "vscode": { "extensions": [] } },
}
`;

async function pinned(text: string, name: string): Promise<string> {
  writeFileSync(join(dir, `${name}.json`), text);
  const out = join(dir, `${name}.pinned.json`);
  const r = await sbx(["manifest", "pin", join(dir, `${name}.json`), "--out", out, "--images", store]);
  assert.equal(r.code, 0, r.err);
  return out;
}

const PROBE = [
  "id -u; id -un; pwd",
  'echo "env $IMAGE_VAR $OVERRIDE_ME $FROM_MANIFEST ${UNSET_ME-unset} $WS"',
  "hello",
  "test -e /usr/bin/bwrap && echo host-usr-visible || echo image-usr",
  "(echo > /usr/x) 2>/dev/null && echo usr-writable || echo usr-read-only",
  "echo made > made-here",
].join("; ");

test("manifest pin writes the digest the store holds, comments kept; run gets the manifest's environment", async () => {
  const p = await pinned(DEVCONTAINER, "dc");
  const text = readFileSync(p, "utf8");
  assert.match(text, new RegExp(`"image": "sbx\\.test/busybox@sha256:${img.manifestHex}"`));
  assert.match(text, /\/\/ written by the test/);
  const ws = mkdtempSync(join(tmpdir(), "sbx-image-ws-"));
  try {
    const r = await sbx([
      "run",
      "--manifest",
      p,
      "--images",
      store,
      "--workspace",
      ws,
      "--json",
      "--",
      "sh",
      "-c",
      PROBE,
    ]);
    assert.equal(r.code, 0, r.err);
    const lines = r.err.split("\n");
    assert.deepEqual(lines.slice(0, 7), [
      "1000",
      "vscode",
      "/workspaces/proj",
      "env from-image manifest yes unset /workspaces/proj",
      "hello from the image",
      "image-usr",
      "usr-read-only",
    ]);
    assert.equal(readFileSync(join(ws, "made-here"), "utf8"), "made\n", "the workspace is the folder");
    const s = JSON.parse(r.out) as {
      sandbox: {
        limits: { cpuMillis: number; memoryBytes: number };
        user: { name: string };
        workspaceFolder: string;
      };
      unit_id: string;
    };
    assert.equal(s.sandbox.limits.cpuMillis, 1000);
    assert.equal(s.sandbox.limits.memoryBytes, 536870912);
    assert.equal(s.sandbox.user.name, "vscode");
    assert.equal(s.sandbox.workspaceFolder, "/workspaces/proj", "the summary names the folder used");
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test("run --manifest: the image's own user (root inside, never outside) when the manifest names none", async () => {
  const p = await pinned(`{"image": "sbx.test/busybox:1"}`, "root");
  const r = await sbx(["run", "--manifest", p, "--images", store, "--json", "--", "sh", "-c", "id -u; pwd"]);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(r.err.split("\n").slice(0, 2), ["0", "/workspace"]);
  assert.equal((JSON.parse(r.out) as { sandbox: { hostUid: number } }).sandbox.hostUid, 65534); // The image imported from the docker-save archive runs the same way.
  const d = await pinned(`{"image": "sbx.test/busybox-docker:1", "remoteUser": "vscode"}`, "docker");
  assert.match(readFileSync(d, "utf8"), /"sbx\.test\/busybox-docker@sha256:[0-9a-f]{64}"/);
  const rd = await sbx([
    "run",
    "--manifest",
    d,
    "--images",
    store,
    "--json",
    "--",
    "sh",
    "-c",
    "id -un; hello",
  ]);
  assert.equal(rd.code, 0, rd.err);
  assert.deepEqual(rd.err.split("\n").slice(0, 2), ["vscode", "hello from the image"]);
});

test("run --manifest: refused without the image in the store, or when hostRequirements cannot be met", async () => {
  const p = await pinned(DEVCONTAINER, "refused");
  const empty = join(dir, "no-store");
  const none = await sbx(["run", "--manifest", p, "--images", empty, "--", "true"]);
  assert.equal(none.code, 1);
  assert.match(none.err, /ImageNotInStore/);
  const other = join(dir, "other-store");
  assert.equal((await sbx(["image", "import", join(dir, "docker.tar"), "--images", other])).code, 0);
  const elsewhere = await sbx(["run", "--manifest", p, "--images", other, "--", "true"]);
  assert.equal(elsewhere.code, 1);
  assert.match(elsewhere.err, /ImageNotInStore/);
  const low = await sbx(["run", "--manifest", p, "--images", store, "--memory", "1048576", "--", "true"]);
  assert.equal(low.code, 1);
  assert.match(low.err, /RequirementsUnmet/);
  const big = await pinned(`{"image": "sbx.test/busybox:1", "hostRequirements": {"cpus": 4096}}`, "big");
  const r = await sbx(["run", "--manifest", big, "--images", store, "--", "true"]);
  assert.equal(r.code, 1);
  assert.match(r.err, /RequirementsUnmet/);
  const folder = await pinned(`{"image": "sbx.test/busybox:1", "workspaceFolder": "/bin/ws"}`, "folder");
  const f = await sbx(["run", "--manifest", folder, "--images", store, "--", "true"]);
  assert.equal(f.code, 1);
  assert.match(f.err, /WorkspaceFolderUnusable/);
  const unpinned = await sbx([
    "run",
    "--manifest",
    join(dir, "refused.json"),
    "--images",
    store,
    "--",
    "true",
  ]);
  assert.equal(unpinned.code, 1);
  assert.match(unpinned.err, /ManifestRefused/);
  const missing = await sbx([
    "manifest",
    "pin",
    join(dir, "refused.json"),
    "--image",
    "sbx.test/nope:1",
    "--images",
    store,
  ]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /ImageNotInStore/);
  assert.equal(
    (await sbx(["run", "--manifest", p, "--images", store, "--unsandboxed", "--", "true"])).code,
    2,
  );
});

const corpus = join(
  resolve(dirname(fileURLToPath(import.meta.url)), "../../.."),
  "testdata/corpus/devcontainer",
);

test("corpus: each of the 72 files pinned to the test image; the declarative ones run, the others are refused naming their members", async () => {
  const index = readFileSync(join(corpus, "INDEX.tsv"), "utf8").trim().split("\n").slice(1);
  const declarative = new Set(
    index
      .map((l) => l.split("\t"))
      .filter((c) => c[4] === "declarative")
      .map((c) => c[0]),
  );
  const files = readdirSync(corpus).filter((f) => f.endsWith(".json"));
  assert.equal(files.length, 72);
  let ran = 0;
  for (const f of files) {
    const out = join(dir, `corpus-${f}`);
    const pin = await sbx([
      "manifest",
      "pin",
      join(corpus, f),
      "--image",
      "sbx.test/busybox:1",
      "--out",
      out,
      "--images",
      store,
      "--json",
    ]);
    assert.equal(pin.code, 0, `${f}: ${pin.err}`);
    const v = JSON.parse(pin.out) as { accepted: boolean; members?: { pointer: string }[] };
    assert.equal(v.accepted, declarative.has(f), f);
    const r = await sbx(["run", "--manifest", out, "--images", store, "--", "true"]);
    if (declarative.has(f)) {
      assert.equal(r.code, 0, `${f}: ${r.err}`);
      ran++;
    } else {
      assert.equal(r.code, 1, f);
      assert.match(r.err, /ManifestRefused/, f);
      assert.ok((v.members ?? []).length > 0, f);
      assert.ok(!(v.members ?? []).some((m) => m.pointer === "/image"), `${f}: the image is pinned now`);
    }
  }
  assert.equal(ran, 10);
});

test("image verify: blobs and the cached rootfs hashed whole; a rootfs that differs is discarded (RootfsMismatch); a tampered blob refused", async () => {
  const ref = `sbx.test/busybox@sha256:${img.manifestHex}`;
  const p = await pinned(`{"image": "sbx.test/busybox:1"}`, "verify");
  assert.equal((await sbx(["run", "--manifest", p, "--images", store, "--", "true"])).code, 0);
  const ok = await sbx(["image", "verify", ref, "--images", store, "--json"]);
  assert.equal(ok.code, 0, ok.out + ok.err);
  assert.deepEqual(JSON.parse(ok.out), [{ image: ref, ok: true, blobs: "ok", rootfs: "ok" }]);
  // Same size, other bytes, in the cache: the whole-tree hash finds it; the tree is discarded.
  const passwd = join(store, "rootfs", img.manifestHex, "etc", "passwd");
  const text = readFileSync(passwd, "utf8");
  writeFileSync(passwd, text.replace("vscode", "evil00"));
  const bad = await sbx(["image", "verify", "sbx.test/busybox:1", "--images", store]);
  assert.equal(bad.code, 1);
  assert.match(bad.out, /^REFUSED\tsbx\.test\/busybox:1\tblobs ok\trootfs RootfsMismatch: discarded$/m);
  assert.equal(existsSync(join(store, "rootfs", img.manifestHex)), false);
  const none = await sbx(["image", "verify", ref, "--images", store]);
  assert.equal(none.code, 0, none.out);
  assert.match(none.out, /rootfs none cached/);
  // A layer blob with one byte flipped, in a copy of the store.
  const copy = join(dir, "images-verify-copy");
  cpSync(store, copy, { recursive: true });
  const layer = [...img.blobs.keys()][0] ?? ""; // the base layer
  const blob = join(copy, "blobs", "sha256", layer);
  const bytes = readFileSync(blob);
  bytes[10] = (bytes[10] ?? 0) ^ 1;
  chmodSync(blob, 0o644);
  writeFileSync(blob, bytes);
  const flipped = await sbx(["image", "verify", "--images", copy, "--json"]);
  assert.equal(flipped.code, 1);
  const rows = JSON.parse(flipped.out) as { image: string; ok: boolean; blobs: string }[];
  const mine = rows.find((r) => r.image === "sbx.test/busybox:1");
  assert.ok(mine !== undefined);
  assert.equal(mine.ok, false);
  assert.match(mine.blobs, /^ImageDigestMismatch/);
  assert.equal((await sbx(["image", "verify", "not a ref!", "--images", store])).code, 2);
});
