// §13.4, §14.9 The check a resume makes before it runs anything: the host's image store holds the
// image the run's manifest pins, with the same bytes. A run suspended on one host resumes on another
// only where this holds; the rootfs cache is checked by its own digest when the run starts.
import { parsePinnedImage } from "@sbx/sandbox-attest/manifest";
import { HostError, type HostErrorCode } from "../errors.ts";
import { imageParts } from "./rootfs.ts";
import type { ImageStore } from "./store.ts";

/** The answer of checkPinnedImage: ok with the manifest digest, or the refusal's code and why. */
export type PinnedImageCheck =
  | { readonly ok: true; readonly hex: string }
  | { readonly ok: false; readonly code: HostErrorCode; readonly message: string };

/**
 * checkPinnedImage (§13.4, §14.9) says whether `store` holds the image `image` pins
 * (`name[:tag]@sha256:<hex>`, compared by digest only) with the same bytes: the image manifest, its
 * config and every layer are hashed again. Returns, never throws, for a store answer:
 * `ImageNotInStore` (the manifest or a blob it names is missing), `ImageDigestMismatch` (a blob's bytes
 * are not its digest), `ImageInvalid` (not a pinned reference, or a manifest the store cannot read).
 * A resume that gets `ok: false` refuses with that code before it restores anything.
 */
export function checkPinnedImage(store: ImageStore, image: string): PinnedImageCheck {
  const pinned = parsePinnedImage(image);
  if (pinned === null)
    return { ok: false, code: "ImageInvalid", message: `${image} is not pinned by sha256` };
  try {
    if (!store.hasBlob(pinned.sha256))
      throw new HostError("ImageNotInStore", `image ${image} is not in the image store ${store.dir}`);
    const { manifest } = imageParts(store, pinned.sha256);
    for (const l of manifest.layers) store.verifyBlob(l.hex);
    return { ok: true, hex: pinned.sha256 };
  } catch (e) {
    if (e instanceof HostError) return { ok: false, code: e.code, message: e.reason };
    throw e;
  }
}
