// Every probe file of transparency-dev/merkle testdata gives its expected result: the valid ones
// verify, every `wantErr` one is refused with the spec's code. Four sets: RFC 9162 inclusion and
// consistency, and the draft-ietf-plants-merkle-tree-certs subtree inclusion and consistency.
import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fromBase64 } from "@sbx/wire";
import { isSandboxAttestError } from "../../src/errors.ts";
import {
  sha256Hasher as h,
  verifyConsistencyProof,
  verifyInclusionProof,
  verifySubtreeConsistencyProof,
  verifySubtreeInclusionProof,
  type Position,
} from "@sbx/sandbox-attest/merkle";
import { readLossless, rfc6962Dir } from "./shared.ts";

const testdata = join(rfc6962Dir, "transparency-dev-testdata/testdata");

function files(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((n) =>
      statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith(".json") ? [join(dir, n)] : [],
    );
}

interface Probe {
  [k: string]: unknown;
  wantErr: boolean;
  desc: string;
}
function b(s: unknown): Uint8Array {
  const bytes = fromBase64(s as string);
  if (bytes === null) throw new Error(`probe holds bad base64 ${String(s)}`);
  return bytes;
}
const list = (p: unknown): Uint8Array[] => ((p as string[] | null) ?? []).map(b);
const pos = (x: unknown): Position => x as Position;

const sets: Record<string, { code: string; check: (p: Probe) => void }> = {
  inclusion: {
    code: "InclusionProofInvalid",
    check: (p) =>
      verifyInclusionProof(
        h,
        { size: pos(p.treeSize), root: b(p.root) },
        pos(p.leafIdx),
        b(p.leafHash),
        list(p.proof),
      ),
  },
  consistency: {
    code: "ConsistencyProofInvalid",
    check: (p) =>
      verifyConsistencyProof(
        h,
        { size: pos(p.size1), root: b(p.root1) },
        { size: pos(p.size2), root: b(p.root2) },
        list(p.proof),
      ),
  },
  subtreeinclusion: {
    code: "InclusionProofInvalid",
    check: (p) =>
      verifySubtreeInclusionProof(
        h,
        { start: pos(p.start), end: pos(p.end), root: b(p.root) },
        pos(p.leafIdx),
        b(p.leafHash),
        list(p.proof),
      ),
  },
  subtreeconsistency: {
    code: "ConsistencyProofInvalid",
    check: (p) =>
      verifySubtreeConsistencyProof(
        h,
        { start: pos(p.start), end: pos(p.end), root: b(p.root1) },
        { size: pos(p.size), root: b(p.root2) },
        list(p.proof),
      ),
  },
};

for (const [set, { code, check }] of Object.entries(sets))
  test(`transparency-dev probes: ${set}`, (t) => {
    const all = files(join(testdata, set));
    let valid = 0;
    let refused = 0;
    const wrong: string[] = [];
    for (const f of all) {
      const p = readLossless(f) as Probe;
      const name = relative(testdata, f);
      try {
        check(p);
        if (p.wantErr) wrong.push(`${name}: accepted, want refusal`);
        else valid++;
      } catch (e) {
        if (!p.wantErr) wrong.push(`${name}: refused (${String(e)}), want valid`);
        else if (!isSandboxAttestError(e) || e.code !== code)
          wrong.push(`${name}: refused with ${String(e)}, want ${code}`);
        else refused++;
      }
    }
    t.diagnostic(`${all.length} probes: ${valid} valid verified, ${refused} refused as expected`);
    assert.deepEqual(wrong, []);
    assert.ok(all.length > 90 && valid > 0 && refused > 0);
  });
