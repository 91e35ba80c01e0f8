// Images (sandbox-attest §14.9): the first run of an image (its layers unpacked into the rootfs cache:
// each layer hashed, its whiteouts applied, its entries checked and written, the tree hashed for the
// record) and later uses (the cached rootfs checked by its stat index; and, as `sbx image verify`
// does, hashed whole and compared with its record), against the
// anchor `tar -x` of the same layer blobs (GNU tar, gzip detected by itself) into a fresh directory.
// The image is one layer made here with GNU tar: Debian's busybox-static with a few applet links,
// and FILES generated files (512 B to 16 KiB) in 50 directories, gzip-compressed as registries serve
// layers.
// Then whole runs of /bin/true in the sandbox: on the image with the rootfs unpacked first, on the
// cached image, and on the host's /usr (no image). Rounds are interleaved; medians are printed.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { addressOf, testKey } from "@sbx/wire";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { ingestManifest } from "@sbx/sandbox-attest/manifest";
import { runUnit } from "@sbx/host/run";
import { sandboxUnavailableReason } from "@sbx/host/sandbox";
import { ensureRootfs, imageRunOptions, importImage, ImageStore, verifyRootfs } from "@sbx/host/image";
import { median, row } from "./measure.ts";

const ROUNDS = Number(process.env.IMAGE_BENCH_ROUNDS ?? 5);
const FILES = Number(process.env.IMAGE_BENCH_FILES ?? 1000);

const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

/** A tree of busybox with its applet links and `n` generated files (512 B to 16 KiB) in 50 directories. */
function makeTree(root: string, n: number): void {
  mkdirSync(join(root, "bin"), { recursive: true });
  copyFileSync("/bin/busybox", join(root, "bin/busybox"));
  for (const a of ["sh", "true", "id", "env", "cat", "ls"]) symlinkSync("busybox", join(root, "bin", a));
  mkdirSync(join(root, "etc"));
  writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  let seed = createHash("sha256").update("image bench").digest();
  for (let d = 0; d < 50; d++) mkdirSync(join(root, `usr/share/bench/d${d}`), { recursive: true });
  for (let i = 0; i < n; i++) {
    seed = createHash("sha256").update(seed).digest();
    const size = 512 + (seed.readUInt32BE(0) % (16 * 1024 - 512));
    const body = Buffer.alloc(size);
    for (let o = 0; o < size; o += 32) seed.copy(body, o);
    writeFileSync(join(root, `usr/share/bench/d${i % 50}/f${i}.txt`), body);
  }
}

/**
 * writeImage writes an OCI layout of one gzip layer (GNU tar of `tree`, as registries serve layers)
 * and returns the manifest's hex and the uncompressed size.
 */
function writeImage(tree: string, layout: string): { hex: string; bytes: number } {
  const blobs = join(layout, "blobs", "sha256");
  mkdirSync(blobs, { recursive: true });
  const put = (b: Buffer) => {
    const h = sha256(b);
    writeFileSync(join(blobs, h), b);
    return h;
  };
  const r = spawnSync("tar", ["-cf", "-", "--numeric-owner", "-C", tree, "."], { maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error("tar -c failed");
  const tar = r.stdout;
  const gz = gzipSync(tar);
  const layer = put(gz);
  const config = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: { Env: ["PATH=/bin"] },
      rootfs: { type: "layers", diff_ids: [`sha256:${sha256(tar)}`] },
    }),
  );
  const cfg = put(config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: `sha256:${cfg}`,
        size: config.length,
      },
      layers: [
        {
          mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
          digest: `sha256:${layer}`,
          size: gz.length,
        },
      ],
    }),
  );
  const hex = put(manifest);
  writeFileSync(join(layout, "oci-layout"), '{"imageLayoutVersion":"1.0.0"}');
  const desc = {
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    digest: `sha256:${hex}`,
    size: manifest.length,
    annotations: { "org.opencontainers.image.ref.name": "sbx.bench/image:1" },
  };
  writeFileSync(join(layout, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [desc] }));
  return { hex, bytes: tar.length };
}

async function time(fn: () => unknown): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "sbx-image-bench-"));
  try {
    makeTree(join(dir, "tree"), FILES);
    const img = writeImage(join(dir, "tree"), join(dir, "layout"));
    const store = ImageStore.open(join(dir, "images"), true);
    importImage(store, join(dir, "layout"));
    const layers = ensureRootfs(store, img.hex).manifest.layers.map((l) => store.blobPath(l.hex));
    const bytes = img.bytes;
    const env = ingestManifest(
      `{"image": "sbx.bench/image@sha256:${img.hex}", "hostRequirements": {"cpus": 1}}`,
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
      full: [] as number[],
      first: [] as number[],
      later: [] as number[],
      host: [] as number[],
    };
    const dropCache = () => rmSync(join(store.dir, "rootfs", img.hex), { recursive: true, force: true });
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
        const unpack = await time(() => ensureRootfs(store, img.hex));
        const cached = await time(() => ensureRootfs(store, img.hex));
        const full = await time(() => verifyRootfs(store, img.hex, { full: true }));
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
        s.full.push(full);
      }
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
    const ms = (x: number) => `${(x * 1000).toFixed(1)} ms`;
    const anchor = median(s.tar);
    console.log(
      `  image of ${layers.length} layers, ${FILES + 60} entries, ${(bytes / 2 ** 20).toFixed(1)} MiB unpacked; median of ${ROUNDS} interleaved rounds`,
    );
    row("anchor: tar -x of the same layer blobs", ms(anchor), 1, "tar -x");
    row(
      "rootfs, first use (verify, unpack, hash tree)",
      ms(median(s.unpack)),
      median(s.unpack) / anchor,
      "tar -x",
    );
    row(
      "rootfs, cached (stat index, compare record)",
      ms(median(s.cached)),
      median(s.cached) / anchor,
      "tar -x",
    );
    row("rootfs, full verify (hash tree, re-index)", ms(median(s.full)), median(s.full) / anchor, "tar -x");
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
