// C4 vectors from the published RFC 6962 SHA-256 tables, as given, plus bit flips of their proofs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errCase, flipHexByte, okCase } from "../../generate/build.ts";
import { testdataDir } from "../../paths.ts";
import type { Vector } from "../../types.ts";

const C = "C4" as const;

interface Published {
  leaves: string[];
  rootsBySize: string[];
  inclusionPublished: {
    leafIndex: number;
    treeSize: number;
    leafHash: string;
    root: string;
    proof: string[];
  }[];
  consistencyPublished: { size1: number; size2: number; root1: string; root2: string; proof: string[] }[];
}

/** The published RFC 6962 SHA-256 vectors, as given, plus bit flips of their proofs. */
export function sha256Vectors(): Vector[] {
  const P = JSON.parse(
    readFileSync(join(testdataDir, "vectors/rfc6962/rfc6962-sha256-vectors.json"), "utf8"),
  ) as Published;
  const out: Vector[] = P.rootsBySize.map((root, n) =>
    okCase(
      C,
      `c4-sha256-root-${n}`,
      `RFC 6962 root over the first ${n} published leaves`,
      "merkle.sha256.root",
      { leaves: P.leaves.slice(0, n) },
      { root },
    ),
  );
  P.inclusionPublished.forEach((c, k) => {
    const input = {
      index: c.leafIndex,
      size: c.treeSize,
      root: c.root,
      leaf_hash: c.leafHash,
      path: c.proof,
    };
    out.push(
      okCase(
        C,
        `c4-sha256-incl-${k}`,
        `published inclusion proof: leaf ${c.leafIndex} of ${c.treeSize}`,
        "merkle.sha256.verify_inclusion",
        input,
        null,
      ),
    );
    c.proof.forEach((el, e) =>
      out.push(
        errCase(
          C,
          `c4-sha256-incl-${k}-bit-${e}`,
          `element ${e} flipped`,
          "merkle.sha256.verify_inclusion",
          { ...input, path: c.proof.map((x, m) => (m === e ? flipHexByte(el, 7) : x)) },
          "InclusionProofInvalid",
        ),
      ),
    );
  });
  P.consistencyPublished.forEach((c, k) => {
    const input = { size1: c.size1, size2: c.size2, root1: c.root1, root2: c.root2, path: c.proof };
    out.push(
      okCase(
        C,
        `c4-sha256-cons-${k}`,
        `published consistency proof ${c.size1} → ${c.size2}`,
        "merkle.sha256.verify_consistency",
        input,
        null,
      ),
    );
    c.proof.forEach((el, e) =>
      out.push(
        errCase(
          C,
          `c4-sha256-cons-${k}-bit-${e}`,
          `element ${e} flipped`,
          "merkle.sha256.verify_consistency",
          { ...input, path: c.proof.map((x, m) => (m === e ? flipHexByte(el, 7) : x)) },
          "ConsistencyProofInvalid",
        ),
      ),
    );
  });
  return out;
}
