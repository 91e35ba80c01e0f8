// Images (sandbox-attest §14.9): the first run of an image (its layers unpacked into the rootfs cache:
// each layer hashed, its whiteouts applied, its entries checked and written, the tree hashed for the
// record) and later runs (the cached rootfs hashed again and compared with its record), against the
// anchor `tar -x` of the same layer blobs (GNU tar, gzip detected by itself) into a fresh directory.
// The image is the test image (busybox-static, its links, a whiteout layer) plus a layer of FILES
// generated files (512 B to 16 KiB) in 50 directories, gzip-compressed as registries serve layers.
// Then whole runs of /bin/true in the sandbox: on the image with the rootfs unpacked first, on the
// cached image, and on the host's /usr (no image). Rounds are interleaved; medians are printed.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { ingestManifest } from "@sbx/sandbox-attest/manifest";
import { runUnit } from "@sbx/host/run";
import { sandboxUnavailableReason } from "@sbx/host/sandbox";
import { ensureRootfs, imageRunOptions, importImage, ImageStore } from "@sbx/host/image";
import {
  baseLayer,
  buildImage,
  upperLayer,
  writeLayout,
  type Entry,
} from "../packages/host/test/image/fixture.ts";
import { median, row } from "./measure.ts";

const ROUNDS = Number(process.env.IMAGE_BENCH_ROUNDS ?? 5);
const FILES = Number(process.env.IMAGE_BENCH_FILES ?? 1000);

/** A layer of `n` files with deterministic contents, in 50 directories. */
function filesLayer(n: number): Entry[] {
  const out: Entry[] = [
    { name: "usr/share/", kind: "dir" },
    { name: "usr/share/bench/", kind: "dir" },
  ];
  for (let d = 0; d < 50; d++) out.push({ name: `usr/share/bench/d${d}/`, kind: "dir" });
  let seed = createHash("sha256").update("image bench").digest();
  for (let i = 0; i < n; i++) {
    seed = createHash("sha256").update(seed).digest();
    const size = 512 + (seed.readUInt32BE(0) % (16 * 1024 - 512));
    const body = Buffer.alloc(size);
    for (let o = 0; o < size; o += 32) seed.copy(body, o);
    out.push({ name: `usr/share/bench/d${i % 50}/f${i}.txt`, kind: "file", body });
  }
  return out;
}

async function time(fn: () => unknown): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "sbx-image-bench-"));
  try {
    const img = buildImage([baseLayer(), upperLayer(), filesLayer(FILES)]);
    writeLayout(img, join(dir, "layout"), "sbx.bench/image:1");
    const store = ImageStore.open(join(dir, "images"), true);
    importImage(store, join(dir, "layout"));
    const layers = ensureRootfs(store, img.manifestHex).manifest.layers.map((l) => store.blobPath(l.hex));
    const bytes = layers.reduce((a, _, i) => a + (img.layerTars[i]?.length ?? 0), 0);
    const env = ingestManifest(
      `{"image": "sbx.bench/image@sha256:${img.manifestHex}", "hostRequirements": {"cpus": 1}}`,
    ).environment;
    const sandboxed = sandboxUnavailableReason() === null;
    const none = addressOf({});
    const unit = {
      hostKey: testKey("host"),
      unitId: unitId(makeUnit({ argv: ["/bin/true"], manifest: none, level: "S0" })),
      grantsId: none,
      manifest: none,
      policy: none,
    };
    const ws = mkdtempSync(join(tmpdir(), "sbx-image-bench-ws-"));
    const s = {
      tar: [] as number[],
      unpack: [] as number[],
      cached: [] as number[],
      first: [] as number[],
      later: [] as number[],
      host: [] as number[],
    };
    const dropCache = () =>
      rmSync(join(store.dir, "rootfs", img.manifestHex), { recursive: true, force: true });
    const run = async (image: boolean) => {
      const sandbox = image ? { workspace: ws, ...imageRunOptions(store, env).sandbox } : { workspace: ws };
      const r = await runUnit({ ...unit, argv: ["/bin/true"], sandbox, meter: { sampleMs: 0 } });
      if (r.outcome.status !== "exited" || r.outcome.exit_code !== 0)
        throw new Error("image bench: /bin/true failed");
    };
    try {
      for (let i = 0; i <= ROUNDS; i++) {
        const tar = await time(() => {
          const out = mkdtempSync(join(dir, "tar-"));
          for (const l of layers)
            if (spawnSync("tar", ["-xf", l, "-C", out]).status !== 0) throw new Error("tar -x failed");
          rmSync(out, { recursive: true, force: true });
        });
        dropCache();
        const unpack = await time(() => ensureRootfs(store, img.manifestHex));
        const cached = await time(() => ensureRootfs(store, img.manifestHex));
        if (sandboxed) {
          dropCache();
          s.first.push(await time(() => run(true)));
          s.later.push(await time(() => run(true)));
          s.host.push(await time(() => run(false)));
        }
        if (i === 0) continue; // warm-up round
        s.tar.push(tar);
        s.unpack.push(unpack);
        s.cached.push(cached);
      }
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
    const ms = (x: number) => `${(x * 1000).toFixed(1)} ms`;
    const anchor = median(s.tar);
    console.log(
      `  image of ${layers.length} layers, ${FILES + 40} entries, ${(bytes / 2 ** 20).toFixed(1)} MiB unpacked; median of ${ROUNDS} interleaved rounds`,
    );
    row("anchor: tar -x of the same layer blobs", ms(anchor), 1, "tar -x");
    row(
      "rootfs, first use (verify, unpack, hash tree)",
      ms(median(s.unpack)),
      median(s.unpack) / anchor,
      "tar -x",
    );
    row(
      "rootfs, cached (hash tree, compare record)",
      ms(median(s.cached)),
      median(s.cached) / anchor,
      "tar -x",
    );
    if (!sandboxed) {
      console.log(`  (sandbox runs not measured: ${sandboxUnavailableReason() ?? ""})`);
      return;
    }
    const host = median(s.host.slice(1));
    row(
      "run /bin/true, image unpacked first",
      ms(median(s.first.slice(1))),
      median(s.first.slice(1)) / anchor,
      "tar -x",
    );
    row(
      "run /bin/true, image cached",
      ms(median(s.later.slice(1))),
      median(s.later.slice(1)) / anchor,
      "tar -x",
    );
    row("run /bin/true on the host's /usr (no image)", ms(host), host / anchor, "tar -x");
    row("  image cached vs host /usr", "", median(s.later.slice(1)) / host, "host /usr run");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
