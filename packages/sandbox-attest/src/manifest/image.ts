// §14.3 The image: an OCI reference pinned by `@sha256:` digest. A tag beside the digest says
// nothing the digest does not, so normalisation drops it.
import type { Json } from "@sbx/wire";
import { scanSubstitutions } from "./substitution.ts";
import type { Sink } from "./values.ts";

const DOMAIN = String.raw`(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?`;
const COMPONENT = String.raw`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`;
const NAME = `${DOMAIN}${COMPONENT}(?:/${COMPONENT})*`;
const TAG = String.raw`(?::[\w][\w.-]{0,127})?`;
const PINNED = new RegExp(`^(${NAME})${TAG}@sha256:([0-9a-f]{64})$`);
const DIGEST_SUFFIX = /@sha256:[0-9a-f]{64}$/;
const MAX_REFERENCE = 512;

/** An image reference split into its repository name and its sha256 hex. */
export interface PinnedImage {
  readonly name: string;
  readonly sha256: string;
}

/** parsePinnedImage splits `name[:tag]@sha256:<hex>`, or returns null for anything else (§14.3). */
export function parsePinnedImage(ref: string): PinnedImage | null {
  if (ref.length > MAX_REFERENCE) return null;
  const m = PINNED.exec(ref);
  return m === null ? null : { name: m[1] ?? "", sha256: m[2] ?? "" };
}

/**
 * image checks and normalises the `image` member (§14.3): absent is `ImageMissing`, not pinned by a
 * sha256 digest is `ImageNotPinned` (after any substitution refusals), a pinned reference that is not
 * an OCI reference is `InvalidValue`. Returns `name@sha256:<hex>`.
 */
export function image(v: Json | undefined, pointer: string, out: Sink): string | null {
  if (v === undefined) {
    out.push({ pointer, code: "ImageMissing" });
    return null;
  }
  if (typeof v !== "string") {
    out.push({ pointer, code: "InvalidValue" });
    return null;
  }
  scanSubstitutions(v, pointer, out, false);
  if (!DIGEST_SUFFIX.test(v)) {
    out.push({ pointer, code: "ImageNotPinned" });
    return null;
  }
  const p = parsePinnedImage(v);
  if (p === null) {
    if (!v.includes("${")) out.push({ pointer, code: "InvalidValue" });
    return null;
  }
  return `${p.name}@sha256:${p.sha256}`;
}
