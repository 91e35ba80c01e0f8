// Test helper: where the published vectors are (testdata/vectors in the repository).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** The external vectors folder. */
export const externalDir = join(repoRoot, "testdata/vectors");

/** readExternal parses one JSON file of the external vectors; the caller states its shape. */
export function readExternal(rel: string): unknown {
  return JSON.parse(readFileSync(join(externalDir, rel), "utf8"));
}
