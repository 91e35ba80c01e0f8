// The image store the sbx commands share (§14.9): `--images DIR`, else `<run store>/images` (runstore.ts),
// and what `sbx run --manifest FILE` takes from a devcontainer.json whose image is pinned.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ingestManifest, type Manifest } from "@sbx/sandbox-attest/manifest";
import { HostError } from "@sbx/host";
import { ImageStore, imageRunOptions, type Rootfs } from "@sbx/host/image";
import type { SandboxOptions } from "@sbx/host/sandbox";
import { MAX_JSON_BYTES, readInput } from "@sbx/host/files";
import { hostLocalDir, runStoreDir, runStoreUrl } from "@sbx/host/stores";

/**
 * imagesDir picks the image store directory: the flag, else `images` in the run store directory
 * (`store`: a command's --store, when it has one). A PostgreSQL run store keeps no images: they stay
 * on this host, in its local folder.
 */
export function imagesDir(given: string | undefined, store?: string): string {
  if (given !== undefined && given !== "") return given;
  return join(runStoreUrl(store) !== null ? hostLocalDir() : runStoreDir(store), "images");
}

/** openImages opens the image store; with `create` unset, a missing store is `ImageNotInStore`. */
export function openImages(given: string | undefined, create: boolean, store?: string): ImageStore {
  const dir = imagesDir(given, store);
  if (!create && !existsSync(join(dir, "oci-layout")))
    throw new HostError(
      "ImageNotInStore",
      `there is no image store at ${dir} (sbx image import puts one there)`,
    );
  return ImageStore.open(dir, create);
}

/** manifestOfFile ingests a devcontainer.json (§14): the manifest, or the refusal (SandboxAttestError). */
export function manifestOfFile(path: string): Manifest {
  return ingestManifest(readInput(path, "devcontainer.json", MAX_JSON_BYTES));
}

/**
 * withManifestImage (§14.9) returns `sandbox` as the manifest says: the pinned image's rootfs as the
 * system, its env, user, workspace folder and hostRequirements as limits. Limits given as flags stay
 * (each at least the requirement: else `RequirementsUnmet`).
 */
export function withManifestImage(
  sandbox: SandboxOptions,
  manifest: Manifest,
  images: string | undefined,
  runStore?: string,
): { sandbox: SandboxOptions; rootfs: Rootfs } {
  const store = openImages(images, false, runStore);
  const asked = {
    ...sandbox.limits,
    ...(sandbox.workspaceBytes !== undefined ? { workspaceBytes: sandbox.workspaceBytes } : {}),
  };
  const r = imageRunOptions(store, manifest.environment, asked);
  return { sandbox: { ...sandbox, ...r.sandbox, workspace: sandbox.workspace }, rootfs: r.rootfs };
}
