// §15.1, §14.9.6 The manifest environment a pool was created from, kept beside its descriptor as
// `<dir>/environment.json` (its canonical bytes, whose address is the descriptor's manifest): a
// claim reads from it the image the manifest pins, which the claimed sandbox must have been built
// from before the claim's interval is signed (../run/built.ts). A pool made from a bare manifest
// address has none: its items are built on the host's /usr and nothing more is known.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { addressOf, canonicalBytes, parseCanonical, type Digest } from "@sbx/wire";
import { parsePinnedImage, type ManifestEnvironment } from "@sbx/sandbox-attest/manifest";
import { HostError } from "../errors.ts";
import { writeFileDurably } from "./files.ts";

const MAX_ENVIRONMENT = 1 << 20;

/** environmentPath is where a pool keeps its manifest environment. */
function environmentPath(dir: string): string {
  return join(dir, "environment.json");
}

/** writePoolEnvironment keeps `env` (whose address must be `manifest`: else RangeError) in the pool `dir`. */
export function writePoolEnvironment(dir: string, manifest: Digest, env: ManifestEnvironment): void {
  if (addressOf(env) !== manifest) throw new RangeError("the pool's environment is not its manifest");
  writeFileDurably(environmentPath(dir), Buffer.from(canonicalBytes(env)).toString("utf8"));
}

/**
 * poolPinnedImage (§14.9.6) is the image (sha256 hex) the pool's manifest pins, null when it pins
 * none, undefined when the pool keeps no environment. An environment that is not the manifest's
 * (changed on disk) is `SandboxMismatch`: nothing is claimed under it.
 */
export function poolPinnedImage(dir: string, manifest: Digest): string | null | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(environmentPath(dir));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  if (bytes.length > MAX_ENVIRONMENT || addressOf(parseCanonical(bytes)) !== manifest)
    throw new HostError("SandboxMismatch", `${environmentPath(dir)} is not the pool's manifest ${manifest}`);
  const env = parseCanonical(bytes) as unknown as ManifestEnvironment;
  return parsePinnedImage(env.image)?.sha256 ?? null;
}
