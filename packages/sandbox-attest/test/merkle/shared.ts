// Where the published Merkle vectors live: testdata/vectors/rfc6962 in the repository.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
/** The RFC 6962 vectors folder. */
export const rfc6962Dir = join(repoRoot, "testdata/vectors/rfc6962");

/**
 * readLossless parses JSON keeping integers beyond 2^53 exact: any bare integer of 16+ digits
 * becomes a bigint (the probes hold 64-bit positions such as 2^64 − 1).
 */
export function readLossless(path: string): unknown {
  const text = readFileSync(path, "utf8").replace(/(:\s*)(\d{16,})(\s*[,}\n])/g, '$1{"$$u64":"$2"}$3');
  return JSON.parse(text, (_k, v: unknown) =>
    v !== null && typeof v === "object" && "$u64" in v ? BigInt((v as { $u64: string }).$u64) : v,
  );
}
