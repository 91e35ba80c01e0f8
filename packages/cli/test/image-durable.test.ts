// Durable runs on a pinned image (sandbox-attest §13.4, §14.9.7): `sbx run --durable --manifest FILE`
// runs the unit on the image's rootfs with the manifest applied, stores the manifest by address with
// the record, suspend records that address, and resume — here or, after export/import, in another
// store with another image store — restores the workspace onto the image, never the host's /usr.
// A resume whose image store lacks the pinned image, or holds other bytes under it, is refused with a
// code and appends nothing. The image is built by the test from Debian's busybox-static.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ingestManifest } from "@sbx/sandbox-attest/manifest";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { FileStore } from "@sbx/host/store";
import {
  baseLayer,
  buildImage,
  upperLayer,
  writeLayout,
  type BuiltImage,
} from "../../host/test/image/fixture.ts";
import { fileIs, FINISH_AGENT, kinds, runIdOf, sbx, waitFor } from "./lifecycle-helpers.ts";

let dir = "";
let images = "";
let layout = "";
let pinnedPath = "";
let img: BuiltImage;

// Four steps; after step 2 it waits for `go`. Each step logs who and where it runs and whether the
// host's /usr (bubblewrap lives there) is visible: on the image it never is.
const AGENT = `#!/bin/sh
n=$(cat state 2>/dev/null || echo 0)
while [ "$n" -lt 4 ]; do
  n=$((n+1))
  echo $n > state
  line="step $n $(id -un) $(pwd) $FROM_MANIFEST $(test -e /usr/bin/bwrap && echo host-usr || echo image-usr)"
  echo "$line" >> log.txt
  echo "$line"
  while [ "$n" = 2 ] && [ ! -e go ]; do /bin/busybox sleep 0.05; done
done
echo done > result
`;

const DEVCONTAINER = `{
  "image": "sbx.test/busybox:1",
  "remoteUser": "vscode",
  "containerEnv": { "FROM_MANIFEST": "yes" },
  "workspaceFolder": "/workspaces/proj",
  "hostRequirements": { "cpus": 1 }
}
`;

const ON_IMAGE = (n: number) => `step ${String(n)} vscode /workspaces/proj yes image-usr`;

before(async () => {
  dir = mkdtempSync(join("/var/tmp", "sbx-image-durable-"));
  images = join(dir, "images");
  layout = join(dir, "layout");
  img = buildImage([baseLayer(), upperLayer()]);
  writeLayout(img, layout, null);
  const a = await sbx(["image", "import", layout, "--name", "sbx.test/busybox:1", "--images", images]);
  assert.equal(a.code, 0, a.err);
  writeFileSync(join(dir, "dc.json"), DEVCONTAINER);
  pinnedPath = join(dir, "dc.pinned.json");
  const p = await sbx(["manifest", "pin", join(dir, "dc.json"), "--out", pinnedPath, "--images", images]);
  assert.equal(p.code, 0, p.err);
});

after(() => rmSync(dir, { recursive: true, force: true }));

function workspace(name: string): string {
  const ws = join(dir, name);
  mkdirSync(ws);
  writeFileSync(join(ws, "agent.sh"), AGENT);
  chmodSync(join(ws, "agent.sh"), 0o755);
  return ws;
}

/** A detached durable run of the agent on the pinned image, waited for at step 2, then released. */
async function parkedOnImage(store: string, ws: string) {
  const r = await sbx([
    "run",
    "--detach",
    "--store",
    store,
    "--images",
    images,
    "--manifest",
    pinnedPath,
    "--workspace",
    ws,
    "--",
    "./agent.sh",
  ]);
  assert.equal(r.code, 0, r.err);
  const id = runIdOf(r.out);
  await waitFor(() => fileIs(join(ws, "state")) === "2", "the agent at step 2");
  assert.deepEqual(readFileSync(join(ws, "log.txt"), "utf8").trim().split("\n"), [ON_IMAGE(1), ON_IMAGE(2)]);
  const s = await sbx(["suspend", id, "--release", "--store", store]);
  assert.equal(s.code, 0, s.err);
  return id;
}

/** The image store a copy of `images` whose first layer blob has one byte flipped. */
function tamperedImages(): string {
  const bad = join(dir, "images-tampered");
  cpSync(images, bad, { recursive: true });
  const m = JSON.parse(img.blobs.get(img.manifestHex)?.toString("utf8") ?? "{}") as {
    layers: { digest: string }[];
  };
  const hex = (m.layers[0]?.digest ?? "").slice("sha256:".length);
  const blob = join(bad, "blobs", "sha256", hex);
  const bytes = readFileSync(blob);
  bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] ?? 0) ^ 1;
  chmodSync(blob, 0o644);
  writeFileSync(blob, bytes);
  return bad;
}

test("durable --manifest FILE: the run is on the image; resume without the image or with other bytes is refused; resume restores onto the image", async () => {
  const store = join(dir, "store");
  const ws = workspace("ws");
  const id = await parkedOnImage(store, ws);
  // Suspend recorded the manifest's address, and the store holds the manifest under it.
  const want = ingestManifest(readFileSync(pinnedPath, "utf8")).address;
  const fs = FileStore.open(store, { readOnly: true });
  const rec = decodeRecord((await fs.readRecordBytes(id)) ?? new Uint8Array()).record;
  const parked = rec.segments[1];
  assert.equal(parked?.kind, "suspended");
  assert.equal(parked.snapshot.manifest, want);
  assert.notEqual(await fs.getObject(want), null, "the manifest is stored by address");

  const none = await sbx(["resume", id, "--store", store, "--images", join(dir, "no-images")]);
  assert.equal(none.code, 1);
  assert.match(none.err, /ImageNotInStore/);
  const bad = await sbx(["resume", id, "--store", store, "--images", tamperedImages()]);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /ImageDigestMismatch/);
  const poor = await sbx(["resume", id, "--store", store, "--images", images], { SBX_OFFER_CPUS: "0" });
  assert.equal(poor.code, 1);
  assert.match(poor.err, /EnvironmentMismatch/);
  assert.deepEqual(await kinds(store, id), ["executed", "suspended"], "nothing appended by a refusal");

  const ok = await sbx(["resume", id, "--store", store, "--images", images, ...FINISH_AGENT]);
  assert.equal(ok.code, 0, ok.err);
  assert.deepEqual(ok.out.trim().split("\n").slice(-2), [ON_IMAGE(3), ON_IMAGE(4)]);
  assert.deepEqual(await kinds(store, id), ["executed", "suspended", "resumed", "executed"]);
  const c = await sbx(["close", id, "--store", store]);
  assert.equal(c.code, 0, c.err);
  assert.match(c.out, /outcome completed/);
});

test("durable run on an image, exported and imported into another store: resumed there onto that host's image store; refused where the image is missing", async () => {
  const store = join(dir, "store-a");
  const id = await parkedOnImage(store, workspace("ws-a"));
  const archive = join(dir, "run.tar");
  const e = await sbx(["export", id, "--store", store, "--out", archive]);
  assert.equal(e.code, 0, e.err);
  const other = join(dir, "store-b");
  const i = await sbx(["import", archive, "--store", other, "--trust", join(store, "host-key.pub.pem")]);
  assert.equal(i.code, 0, i.err);
  // The other host's image store: empty at first, then the same image imported from its layout.
  const theirs = join(dir, "images-b");
  const missing = await sbx(["resume", id, "--store", other, "--images", theirs]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /ImageNotInStore/);
  assert.equal(
    (await sbx(["image", "import", layout, "--name", "other.example/bb:2", "--images", theirs])).code,
    0,
  );
  const ok = await sbx(["resume", id, "--store", other, "--images", theirs, ...FINISH_AGENT]);
  assert.equal(ok.code, 0, ok.err);
  assert.deepEqual(ok.out.trim().split("\n").slice(-2), [ON_IMAGE(3), ON_IMAGE(4)]);
  assert.deepEqual(await kinds(other, id), ["executed", "suspended", "resumed", "executed"]);
  assert.deepEqual(await kinds(store, id), ["executed", "suspended"], "the first store is untouched");
  const c = await sbx(["close", id, "--store", store]);
  assert.equal(c.code, 0, c.err);
  assert.match(c.out, /outcome abandoned/);
  const again = await sbx(["resume", id, "--store", store, "--images", images]);
  assert.equal(again.code, 1);
  assert.match(again.err, /RecordClosed/);
});

/**
 * unitLines is the unit's own output of a durable run: the host's one `run blake3:…` line (which
 * may come before or after the unit's lines, both writing to stdout) taken out, checked present once.
 */
function unitLines(out: string): string[] {
  const lines = out.trim().split("\n");
  const host = lines.filter((l) => /^run blake3:[0-9a-f]{64}$/.test(l));
  assert.equal(host.length, 1, out);
  return lines.filter((l) => !host.includes(l));
}

test("durable --manifest ADDR: a manifest the run store holds pins the image the run runs on; without its image store refused", async () => {
  const store = join(dir, "store-addr");
  const m = ingestManifest(readFileSync(pinnedPath, "utf8"));
  const { storeManifest } = await import("@sbx/host/durable");
  await storeManifest(FileStore.open(store, { create: true }), m);
  const probe = [
    "--",
    "/bin/sh",
    "-c",
    "id -un; pwd; test -e /usr/bin/bwrap && echo host-usr || echo image-usr",
  ];
  const r = await sbx(["run", "--store", store, "--images", images, "--manifest", m.address, ...probe]);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(unitLines(r.out), ["vscode", "/workspaces/proj", "image-usr"]);
  const no = await sbx([
    "run",
    "--store",
    store,
    "--images",
    join(dir, "no-images"),
    "--manifest",
    m.address,
    ...probe,
  ]);
  assert.equal(no.code, 1);
  assert.match(no.err, /ImageNotInStore/);
  // Without --images, the image store is images/ in the run store (--store).
  const own = join(store, "images");
  assert.equal(
    (await sbx(["image", "import", layout, "--name", "sbx.test/busybox:1", "--images", own])).code,
    0,
  );
  const d = await sbx(["run", "--store", store, "--manifest", m.address, ...probe]);
  assert.equal(d.code, 0, d.err);
  assert.deepEqual(unitLines(d.out), ["vscode", "/workspaces/proj", "image-usr"]);
  const user = await sbx([
    "run",
    "--store",
    store,
    "--images",
    images,
    "--manifest",
    m.address,
    "--user",
    "x",
    ...probe,
  ]);
  assert.equal(user.code, 2);
});
