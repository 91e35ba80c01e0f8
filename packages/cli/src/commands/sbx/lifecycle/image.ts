// §13.4, §14.9.7 The image of a durable run. The run's manifest is stored in the run store under its
// address (so an export carries it and any host can read it back); its pinned image is then the
// system of every sandbox of the run: the one `sbx run --durable` starts, and the fresh one a resume
// restores the workspace into, on this host or another. A resume first checks that this host's image
// store holds the pinned image with the same bytes (checkPinnedImage: ImageNotInStore,
// ImageDigestMismatch, ImageInvalid) and refuses with that code before it restores anything; the
// rootfs cache is then verified before use (ensureRootfs, §14.9.4).
import { parseCanonical, type Digest } from "@sbx/wire";
import { parsePinnedImage, type Manifest, type ManifestEnvironment } from "@sbx/sandbox-attest/manifest";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { HostError } from "@sbx/host";
import { checkPinnedImage, imageRunOptions } from "@sbx/host/image";
import { NO_MANIFEST, storeManifest } from "@sbx/host/durable";
import type { RunStore } from "@sbx/host/stores";
import type { SandboxOptions } from "@sbx/host/sandbox";
import { UsageError } from "../../../command.ts";
import { openImages } from "../../../images.ts";

/**
 * storeRunManifest stores a manifest read from a file (`sbx run --durable --manifest FILE`) in the
 * run store under its address, before the run is created: the record cites it (§13.2 snapshots) and
 * a resuming host reads it back from there.
 */
export async function storeRunManifest(store: RunStore, m: Manifest | null): Promise<void> {
  if (m === null) return;
  const at = await storeManifest(store, m);
  if (at !== m.address) throw new Error(`manifest ${m.address} was stored under ${at}`);
}

/** runEnvironment reads the manifest `address` of a run back from its store (null: no manifest). */
async function runEnvironment(store: RunStore, address: Digest): Promise<ManifestEnvironment | null> {
  if (address === NO_MANIFEST) return null;
  const bytes = await store.getObject(address);
  if (bytes === null)
    throw new SandboxAttestError("ManifestMismatch", `the run's manifest ${address} is not in the store`);
  return parseCanonical(bytes) as unknown as ManifestEnvironment;
}

/**
 * pinnedImageOf (§14.9.6) is the image (sha256 hex) the run's manifest `address` pins, read back from
 * the run store (null: no manifest, or one without an image): what every interval's sandbox is
 * checked against before it is signed (host run/built.ts).
 */
export async function pinnedImageOf(store: RunStore, address: Digest): Promise<string | null> {
  const env = await runEnvironment(store, address);
  return env === null ? null : (parsePinnedImage(env.image)?.sha256 ?? null);
}

type Base = Omit<SandboxOptions, "workspace">;

/**
 * durableImageSandbox (§14.9.6, §14.9.7) returns `base` as the run's manifest `address` says: its
 * pinned image's verified rootfs as the system, with its env, user, workspace folder and
 * hostRequirements as limits (imageRunOptions). A run without a manifest keeps `base`. With
 * `resume`, the image store must first hold the pinned image with the same bytes (checkPinnedImage),
 * else the refusal's code. `images` is the image store (`--images`, else `images/` in the run store).
 */
export async function durableImageSandbox<T extends Base>(
  store: RunStore,
  address: Digest,
  images: string | undefined,
  base: T,
  resume: boolean,
): Promise<T> {
  const env = await runEnvironment(store, address);
  if (env === null) return base;
  if (base.user !== undefined)
    throw new UsageError(`manifest ${address} names the run's image and user: no --user`);
  const imgs = openImages(images, false, store.root);
  if (resume) {
    const c = checkPinnedImage(imgs, env.image);
    if (!c.ok) throw new HostError(c.code, `resume refused: ${c.message}`);
  }
  const asked = {
    ...base.limits,
    ...(base.workspaceBytes !== undefined ? { workspaceBytes: base.workspaceBytes } : {}),
  };
  const r = imageRunOptions(imgs, env, asked);
  return { ...base, ...r.sandbox };
}
