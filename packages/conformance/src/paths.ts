// Where the repository's vectors and the shared published vectors live.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** The repository's own wire vectors (SBX_VECTORS_DIR overrides, for the harness's own tests). */
export const vectorsDir = process.env.SBX_VECTORS_DIR ?? join(repoRoot, "vectors");
/** The shared folder beside the repository (published vectors, the devcontainer corpus); SBX_SHARED overrides. */
export const sharedDir = process.env.SBX_SHARED ?? resolve(repoRoot, "../shared");
