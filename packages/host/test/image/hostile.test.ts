// §14.9 Hostile images, one test per class: zstd bytes, gzip bombs (per layer, per image, per staged
// archive, with the importing process's max RSS and the store's bytes on disk bounded), over-long
// names, entry types and header fields §14.9.3 does not admit, valid empty layers, bad image names,
// multi-image inputs with a broken image, platform selection. Every input is generated here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import {
  closeSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { createGzip, gzipSync } from "node:zlib";
import { isHostError } from "../../src/errors.ts";
import { ensureRootfs, importImage, ImageStore, type ImageLimits } from "../../src/image/index.ts";
import { baseLayer, buildImage, dockerSave, ociArchive, sha256, tarOf, writeLayout } from "./fixture.ts";

const run = promisify(execFile);

function tmp(): string {
  return mkdtempSync(join(tmpdir(), "sbx-hostile-"));
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(isHostError(e), `not a coded refusal: ${String(e)}`);
    return e.code;
  }
  return "ok";
}

/** bytesUnder sums the sizes of the regular files under `dir`. */
function bytesUnder(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    n += st.isDirectory() ? bytesUnder(p) : st.size;
  }
  return n;
}

/** A raw ustar header, every field given as text (so a test can break any one of them). */
interface Raw {
  name: string;
  flag: string;
  size?: number;
  sizeField?: string;
  link?: string;
  magic?: string;
}

function rawHeader(r: Raw): Buffer {
  const h = Buffer.alloc(512);
  h.write(r.name, 0, 100, "utf8");
  h.write("0000644\0", 100, "latin1");
  h.write("0000000\0", 108, "latin1");
  h.write("0000000\0", 116, "latin1");
  h.write(r.sizeField ?? `${(r.size ?? 0).toString(8).padStart(11, "0")}\0`, 124, 12, "latin1");
  h.write("00000000000\0", 136, "latin1");
  h.write("        ", 148, "latin1");
  h.write(r.flag, 156, "latin1");
  h.write(r.link ?? "", 157, 100, "utf8");
  h.write(r.magic ?? "ustar\u000000", 257, 8, "latin1");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
  return h;
}

const pad = (n: number): Buffer => Buffer.alloc((512 - (n % 512)) % 512);

/** rawTar joins entries (header and body) and the two end blocks. */
function rawTar(entries: readonly { h: Raw; body?: Buffer }[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = e.body ?? Buffer.alloc(0);
    parts.push(rawHeader({ size: body.length, ...e.h }), body, pad(body.length));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** A pax extended header carrying `records`, for the entry after it. */
function pax(records: Record<string, string>): { h: Raw; body: Buffer } {
  let text = "";
  for (const [k, v] of Object.entries(records)) {
    const rest = ` ${k}=${v}\n`;
    let len = Buffer.byteLength(rest) + 1;
    while (String(len).length + Buffer.byteLength(rest) !== len) len++;
    text += `${len}${rest}`;
  }
  return { h: { name: "PaxHeaders/x", flag: "x" }, body: Buffer.from(text) };
}

/** imageWith builds a one-layer image whose layer blob is `layer` (media type as given). */
function imageWith(layer: Buffer, mediaType = "application/vnd.oci.image.layer.v1.tar") {
  const img = buildImage([baseLayer()]);
  const base = [...img.blobs].find(([, b]) => b.equals(img.layerTars[0]!))![0];
  img.blobs.delete(base);
  const hex = sha256(layer);
  img.blobs.set(hex, layer);
  const manifest = JSON.parse(img.blobs.get(img.manifestHex)!.toString()) as {
    layers: { mediaType: string; digest: string; size: number }[];
  };
  img.blobs.delete(img.manifestHex);
  manifest.layers = [{ mediaType, digest: `sha256:${hex}`, size: layer.length }];
  const m = Buffer.from(JSON.stringify(manifest));
  const manifestHex = sha256(m);
  img.blobs.set(manifestHex, m);
  return { ...img, manifestHex };
}

/** unpackOf imports a one-layer image (a layout dir) and unpacks it: the refusal's code, or "ok". */
function unpackOf(layer: Buffer, limits?: ImageLimits, mediaType?: string): string {
  const d = tmp();
  const img = imageWith(layer, mediaType);
  writeLayout(img, join(d, "layout"), "hostile:1");
  const store = ImageStore.open(join(d, "store"), true);
  return code(() =>
    importImage(store, join(d, "layout"), undefined, {
      verify: (hex) => void ensureRootfs(store, hex, limits),
      limits,
    }),
  );
}

const SMALL: ImageLimits = { maxLayerBytes: 8 << 20, maxImageBytes: 12 << 20, maxStagedBytes: 8 << 20 };

test("hostile: zstd bytes in a layer or as an archive are ImageInvalid, never a crash", () => {
  const zstd = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.alloc(600, 7)]);
  assert.equal(unpackOf(zstd), "ImageInvalid");
  assert.equal(unpackOf(zstd, undefined, "application/vnd.oci.image.layer.v1.tar+gzip"), "ImageInvalid");
  assert.equal(unpackOf(zstd, undefined, "application/vnd.oci.image.layer.v1.tar+zstd"), "ImageInvalid");
  const d = tmp();
  writeFileSync(join(d, "a.tar.zst"), zstd);
  const store = ImageStore.open(join(d, "store"), true);
  assert.equal(
    code(() => importImage(store, join(d, "a.tar.zst"), "x:1")),
    "ImageInvalid",
  );
  assert.deepEqual(readdirSync(join(d, "store", "tmp")), []);
});

test("hostile: a gzip bomb stops at the layer bound, the image bound and the staged-archive bound", () => {
  const file = (name: string, n: number) => ({ name, kind: "file" as const, body: Buffer.alloc(n) });
  // One layer over the layer bound (9 MiB of tar stream, bound 8 MiB).
  assert.equal(unpackOf(gzipSync(tarOf([file("big", 9 << 20)])), SMALL), "ImageTooLarge");
  // A header that claims more than the bound leaves is refused from the header.
  const claim = rawTar([{ h: { name: "huge", flag: "0", sizeField: "77777777777\0" } }]).subarray(0, 512);
  assert.equal(unpackOf(claim, SMALL), "ImageTooLarge");
  // Two layers each under the layer bound, together over the image bound (12 MiB).
  const d = tmp();
  const img = buildImage([[file("a", 7 << 20)], [file("b", 7 << 20)]]);
  writeLayout(img, join(d, "layout"), "two:1");
  const store = ImageStore.open(join(d, "store"), true);
  assert.equal(
    code(() =>
      importImage(store, join(d, "layout"), undefined, { verify: (h) => void ensureRootfs(store, h, SMALL) }),
    ),
    "ImageTooLarge",
  );
  assert.deepEqual(store.images(), []);
  // An OCI archive whose (gzip) tar stream is over the staged bound: nothing stays in tmp/.
  const arch = gzipSync(ociArchive(buildImage([[file("c", 9 << 20)]]), "arch:1"));
  writeFileSync(join(d, "a.tar.gz"), arch);
  assert.equal(
    code(() => importImage(store, join(d, "a.tar.gz"), undefined, { limits: SMALL })),
    "ImageTooLarge",
  );
  assert.deepEqual(readdirSync(join(d, "store", "tmp")), []);
  assert.deepEqual(store.images(), []);
});

test("hostile: a 1 GiB gzip bomb layer is inflated in bounded steps: max RSS and disk stay small", async () => {
  const d = tmp();
  // A tar of one 1 GiB file of zeros, gzipped (about 1 MiB), deflated here in 64 MiB pieces.
  const zero = Buffer.alloc(64 << 20);
  function* tarStream() {
    yield rawHeader({ name: "bomb", flag: "0", size: 1 << 30 });
    for (let i = 0; i < 16; i++) yield zero;
    yield Buffer.alloc(1024);
  }
  const chunks: Buffer[] = [];
  const gz = createGzip({ level: 6 });
  gz.on("data", (c: Buffer) => chunks.push(c));
  await pipeline(Readable.from(tarStream()), gz);
  const bomb = Buffer.concat(chunks);
  assert.ok(bomb.length < 4 << 20, `the bomb is ${bomb.length} bytes`);
  const img = imageWith(bomb, "application/vnd.oci.image.layer.v1.tar+gzip");
  writeLayout(img, join(d, "layout"), "bomb:1");
  const storeDir = join(d, "store");
  const child = join(import.meta.dirname, "bomb-child.ts");
  const out = execFileSync(process.execPath, ["--import", "tsx", child, storeDir, join(d, "layout")], {
    encoding: "utf8",
  });
  const r = JSON.parse(out) as { code: string; maxRssKiB: number };
  // The child bounds a layer at 512 MiB of tar stream: the bomb stops there.
  assert.equal(r.code, "ImageTooLarge");
  assert.ok(r.maxRssKiB < 200 * 1024, `max RSS ${r.maxRssKiB} KiB`);
  // On disk: the store holds the blobs it was given and no more (nothing of the bomb unpacked).
  let blobs = 0;
  for (const b of img.blobs.values()) blobs += b.length;
  assert.ok(bytesUnder(storeDir) <= blobs + (64 << 10), `${bytesUnder(storeDir)} bytes under the store`);
  assert.deepEqual(readdirSync(join(storeDir, "tmp")), []);
});

/**
 * importInChild imports `input` into `storeDir` in a process of its own (bomb-child.ts, staged bound
 * `stagedBytes`), sampling the store's bytes on disk every 5 ms while it runs: the refusal's code, the
 * child's max RSS, and the most the store held at any sample.
 */
async function importInChild(storeDir: string, input: string, stagedBytes: number) {
  const child = join(import.meta.dirname, "bomb-child.ts");
  let peak = 0;
  const poll = setInterval(() => {
    try {
      peak = Math.max(peak, bytesUnder(storeDir));
    } catch {
      // a file went between the listing and its stat: the next sample counts
    }
  }, 5);
  try {
    const { stdout } = await run(process.execPath, [
      "--import",
      "tsx",
      child,
      storeDir,
      input,
      String(stagedBytes),
    ]);
    return { ...(JSON.parse(stdout) as { code: string; maxRssKiB: number }), peak };
  } finally {
    clearInterval(poll);
  }
}

test("hostile: a 1 GiB OCI archive bomb (gzip) and a sparse 1 GiB docker-save, in members under the bound, stop at the staged bound: max RSS and disk bounded", async () => {
  const d = tmp();
  const staged = 64 << 20;
  // Members of 32 MiB, each under the bound, 1 GiB in all: staging writes up to the bound, then stops.
  const member = 32 << 20;
  const names = Array.from({ length: 32 }, (_, i) => `blobs/sha256/${i.toString(16).padStart(64, "0")}`);
  // An OCI archive of 1 GiB of zeros, gzipped to about 1 MiB.
  const zero = Buffer.alloc(member);
  function* tarStream() {
    for (const name of names) yield* [rawHeader({ name, flag: "0", size: member }), zero];
    yield Buffer.alloc(1024);
  }
  const chunks: Buffer[] = [];
  const gz = createGzip({ level: 6 });
  gz.on("data", (c: Buffer) => chunks.push(c));
  await pipeline(Readable.from(tarStream()), gz);
  writeFileSync(join(d, "bomb.tar.gz"), Buffer.concat(chunks));
  // A docker-save of the same members, the file sparse (only its headers on disk).
  const save = join(d, "save.tar");
  const fd = openSync(save, "w");
  names.forEach((name, i) =>
    writeSync(fd, rawHeader({ name, flag: "0", size: member }), 0, 512, i * (512 + member)),
  );
  closeSync(fd);
  truncateSync(save, names.length * (512 + member) + 1024);
  for (const input of [join(d, "bomb.tar.gz"), save]) {
    const storeDir = join(d, `store-${input.endsWith(".gz") ? "oci" : "save"}`);
    const r = await importInChild(storeDir, input, staged);
    assert.equal(r.code, "ImageTooLarge", input);
    assert.ok(r.maxRssKiB < 200 * 1024, `${input}: max RSS ${r.maxRssKiB} KiB`);
    // What was staged never passed the bound (and the 64 KiB of a tar block's slack), then went.
    assert.ok(r.peak <= staged + (64 << 10), `${input}: the store held ${r.peak} bytes`);
    assert.deepEqual(readdirSync(join(storeDir, "tmp")), [], input);
    assert.equal(bytesUnder(storeDir) <= 64 << 10, true, `${input}: ${bytesUnder(storeDir)} bytes left`);
    console.log(`${input}: ImageTooLarge, max RSS ${r.maxRssKiB} KiB, store at most ${r.peak} bytes`);
  }
  rmSync(d, { recursive: true, force: true });
});

test("hostile: names over 255 bytes a component or over PATH_MAX are ImageInvalid, not an OS error", () => {
  const long = "a".repeat(300);
  assert.equal(unpackOf(rawTar([pax({ path: long }), { h: { name: "x", flag: "0" } }])), "ImageInvalid");
  const deep = Array.from({ length: 20 }, () => "b".repeat(250)).join("/");
  assert.equal(unpackOf(rawTar([pax({ path: deep }), { h: { name: "x", flag: "0" } }])), "ImageInvalid");
  const gnu = { h: { name: "././@LongLink", flag: "L", magic: "ustar  \0" }, body: Buffer.from(`${long}\0`) };
  assert.equal(unpackOf(rawTar([gnu, { h: { name: "x", flag: "0", magic: "ustar  \0" } }])), "ImageInvalid");
  assert.equal(unpackOf(rawTar([pax({ linkpath: long }), { h: { name: "l", flag: "2" } }])), "ImageInvalid");
  // Under the bounds, a pax name over 100 bytes is read whole.
  const ok = `${"c".repeat(200)}/${"d".repeat(200)}`;
  assert.equal(
    unpackOf(rawTar([pax({ path: ok }), { h: { name: "x", flag: "0" }, body: Buffer.from("hi") }])),
    "ok",
  );
});

test("hostile: entry types and header fields §14.9.3 does not admit are ImageInvalid", () => {
  const file = { h: { name: "f", flag: "0" }, body: Buffer.from("data") };
  for (const flag of ["S", "Z", "V", "M", "D", "N", "A"])
    assert.equal(unpackOf(rawTar([{ h: { name: "odd", flag } }, file])), "ImageInvalid", `typeflag ${flag}`);
  assert.equal(unpackOf(rawTar([pax({ "GNU.sparse.major": "1" }), file])), "ImageInvalid", "GNU sparse");
  for (const sizeField of ["00000000x04\0", "           \0", "-0000000004\0", "0000000004 9"])
    assert.equal(
      unpackOf(rawTar([{ h: { name: "f", flag: "0", sizeField }, body: Buffer.from("data") }])),
      "ImageInvalid",
      `size ${JSON.stringify(sizeField)}`,
    );
  assert.equal(
    unpackOf(rawTar([{ h: { name: "f", flag: "0", magic: "notustar" } }])),
    "ImageInvalid",
    "magic",
  );
  const t = rawTar([file]);
  t.write("z", 148 + 3, "latin1");
  assert.equal(unpackOf(t), "ImageInvalid", "checksum");
  // A directory or a link that carries data; bytes past the end blocks; no end at all.
  assert.equal(unpackOf(rawTar([{ h: { name: "d/", flag: "5" }, body: Buffer.from("x") }])), "ImageInvalid");
  assert.equal(unpackOf(Buffer.concat([rawTar([file]), Buffer.from("trailing")])), "ImageInvalid");
  assert.equal(unpackOf(rawTar([file]).subarray(0, 1024)), "ImageInvalid");
  assert.equal(unpackOf(Buffer.from(pax({ "bad record": "" }).body)), "ImageInvalid");
});

test("hostile: a valid empty layer (only the end blocks, plain or gzip) is accepted", () => {
  assert.equal(unpackOf(Buffer.alloc(1024)), "ok");
  assert.equal(
    unpackOf(gzipSync(Buffer.alloc(1024)), undefined, "application/vnd.oci.image.layer.v1.tar+gzip"),
    "ok",
  );
  assert.equal(unpackOf(Buffer.alloc(10240)), "ok", "a GNU tar record of zeros");
});

test("hostile: an image name that is not name[:tag] is ImageInvalid", () => {
  const d = tmp();
  const img = buildImage([baseLayer()]);
  writeLayout(img, join(d, "layout"), null);
  const store = ImageStore.open(join(d, "store"), true);
  for (const name of ["UPPER:1", "a/${HOME}:1", "x".repeat(300), "a:b:c:", "bad name"])
    assert.equal(
      code(() => importImage(store, join(d, "layout"), name)),
      "ImageInvalid",
      name,
    );
  writeFileSync(join(d, "save.tar"), dockerSave(img, "Not/Lower:CASE"));
  assert.equal(
    code(() => importImage(store, join(d, "save.tar"))),
    "ImageInvalid",
  );
  assert.deepEqual(store.images(), []);
});

test("hostile: an input with two images, the second broken, names neither", () => {
  const d = tmp();
  const good = buildImage([baseLayer()]);
  const broken = imageWith(rawTar([{ h: { name: "p", flag: "6" } }]));
  const layout = join(d, "layout");
  writeLayout(good, layout, "good:1");
  writeLayout(broken, join(d, "l2"), "broken:1");
  const idx = (p: string) =>
    JSON.parse(readFileSync(join(p, "index.json"), "utf8")) as { manifests: unknown[] };
  const both = { schemaVersion: 2, manifests: [...idx(layout).manifests, ...idx(join(d, "l2")).manifests] };
  for (const [h, b] of broken.blobs) writeFileSync(join(layout, "blobs/sha256", h), b);
  writeFileSync(join(layout, "index.json"), JSON.stringify(both));
  const store = ImageStore.open(join(d, "store"), true);
  const verify = (hex: string) => void ensureRootfs(store, hex);
  assert.equal(
    code(() => importImage(store, layout, undefined, { verify })),
    "LayerDeviceNode",
  );
  assert.deepEqual(store.images(), []);
  // A second image whose blob is missing: refused, and the first is not named either.
  rmSync(join(layout, "blobs/sha256", broken.manifestHex));
  assert.equal(
    code(() => importImage(store, layout)),
    "ImageInvalid",
  );
  assert.deepEqual(store.images(), []);
});

test("hostile: an index whose manifests are all for another platform is refused", () => {
  const d = tmp();
  const img = buildImage([baseLayer()]);
  const layout = join(d, "layout");
  writeLayout(img, layout, null);
  const m = img.blobs.get(img.manifestHex)!;
  const other = { os: "linux", architecture: process.arch === "x64" ? "riscv64" : "amd64" };
  const entry = {
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    digest: `sha256:${img.manifestHex}`,
    size: m.length,
  };
  const store = ImageStore.open(join(d, "store"), true);
  // At the top of index.json…
  writeFileSync(
    join(layout, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [{ ...entry, platform: other, annotations: { "org.opencontainers.image.ref.name": "p:1" } }],
    }),
  );
  assert.equal(
    code(() => importImage(store, layout)),
    "ImageInvalid",
  );
  // …and in a nested index, even as its only entry.
  const nested = Buffer.from(
    JSON.stringify({ schemaVersion: 2, manifests: [{ ...entry, platform: other }] }),
  );
  writeFileSync(join(layout, "blobs/sha256", sha256(nested)), nested);
  const top = {
    mediaType: "application/vnd.oci.image.index.v1+json",
    digest: `sha256:${sha256(nested)}`,
    size: nested.length,
    annotations: { "org.opencontainers.image.ref.name": "p:1" },
  };
  writeFileSync(join(layout, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [top] }));
  assert.equal(
    code(() => importImage(store, layout)),
    "ImageInvalid",
  );
  assert.deepEqual(store.images(), []);
  // The host's own platform, beside another, is selected.
  const host = { os: "linux", architecture: process.arch === "x64" ? "amd64" : process.arch };
  const both = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        { ...entry, digest: `sha256:${"0".repeat(64)}`, platform: other },
        { ...entry, platform: host },
      ],
    }),
  );
  writeFileSync(join(layout, "blobs/sha256", sha256(both)), both);
  writeFileSync(
    join(layout, "index.json"),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [{ ...top, digest: `sha256:${sha256(both)}`, size: both.length }],
    }),
  );
  assert.deepEqual(
    importImage(store, layout).map((i) => i.hex),
    [img.manifestHex],
  );
});
