// @sbx/host/image — §14.9 images: the local content-addressed image store, import from OCI layouts
// and archives, layers unpacked into a verified read-only rootfs, the sandbox a manifest with an
// image describes, and the check a resume makes (§13.4).
export { ImageStore, parseRef, sha256File } from "./store.ts";
export type { ImageRef, StoredImage } from "./store.ts";
export { importImage } from "./import.ts";
export { unpackLayers, namePartsOf, linkEscapes } from "./unpack.ts";
export type { UnpackStats } from "./unpack.ts";
export { ensureRootfs, verifyRootfs, treeDigest, imageParts } from "./rootfs.ts";
export type { Rootfs } from "./rootfs.ts";
export { imageSystem, imageEtc, rootfsEntries } from "./system.ts";
export type { ImageSystem } from "./system.ts";
export {
  imageRunOptions,
  imageEnv,
  imageUser,
  requirementLimits,
  offeredEnvironment,
} from "./environment.ts";
export type { ImageRunOptions, AskedLimits } from "./environment.ts";
export { checkPinnedImage } from "./resume.ts";
export type { PinnedImageCheck } from "./resume.ts";
export { walkTar } from "./archive.ts";
export type { TarEntry, EntrySink } from "./archive.ts";
export { parseManifest, parseConfig, parseIndex, MEDIA, IMAGE_LIMITS } from "./oci.ts";
export type { Descriptor, ImageManifest, ImageConfig, ImageLimits } from "./oci.ts";
