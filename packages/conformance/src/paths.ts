// Where the repository's own vectors and its copies of published vectors live.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** The repository's own wire vectors (SBX_VECTORS_DIR overrides, for the harness's own tests). */
export const vectorsDir = process.env.SBX_VECTORS_DIR ?? join(repoRoot, "vectors");
/** The repository's copies of third-party test data (published vectors, the devcontainer corpus): testdata/. */
export const testdataDir = join(repoRoot, "testdata");
