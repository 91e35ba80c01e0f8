// §14.9.6 What a sandbox was built from, against what its attestation states. A host never signs a
// manifest address whose environment its sandbox did not provide: before an interval is signed,
// the image the sandbox's system was built from (Provided.image: an image manifest's sha256 hex, or
// null for the host's /usr) MUST be the image the stated manifest pins (null when it pins none).
// Checked wherever a unit starts: a run (run.ts), a durable run and its resumes (../durable/
// session.ts), a warm-pool claim (the parked sandbox's recorded facts, ../pool/parked.ts).
import { HostError } from "../errors.ts";
import type { Provided } from "../sandbox/plan.ts";

const what = (image: string | null): string =>
  image === null ? "the host's /usr (no image)" : `image sha256:${image}`;

/**
 * checkBuiltFrom (§14.9.6) refuses (`SandboxMismatch`) to sign for a sandbox whose system is not the
 * image `pinned` (sha256 hex, null: none) that the attested manifest pins. A plain process (no
 * sandbox: `provided` null) states no system and passes.
 */
export function checkBuiltFrom(provided: Provided | null, pinned: string | null): void {
  if (provided === null) return;
  const built = provided.image ?? null; // a parked sandbox recorded by an older host: the host's /usr
  if (built !== pinned)
    throw new HostError(
      "SandboxMismatch",
      `the sandbox was built from ${what(built)}, but the manifest it would be attested under pins ${what(pinned)}: nothing is signed`,
    );
}
