// C19: grant sets (jcp §4.1). grants_id = the address of {"type":"jcp.grant-set/1","grants":[…]}
// with the grant addresses in ascending order; the outputs are stated as addresses of that form.
import { addressOf, type Digest } from "@sbx/wire";
import { errCase, okCase } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
import { addr, standardChain } from "./grants/fixtures.ts";
import { grantSetCheck, grantSetId } from "./grants/ops.ts";

const C = "C19" as const;
const T = "jcp.grant-set/1";

function vectors(): Vector[] {
  const [a, b, c] = standardChain().map(addr) as [Digest, Digest, Digest];
  const sorted = [a, b, c].sort();
  const id = addressOf({ type: T, grants: sorted });
  return [
    okCase(C, "c19-id", "grants_id of three grants", "grantset.id", { grants: [a, b, c] }, { grants_id: id }),
    okCase(
      C,
      "c19-id-any-order",
      "the order given does not matter",
      "grantset.id",
      { grants: [c, a, b] },
      { grants_id: id },
    ),
    okCase(
      C,
      "c19-id-one",
      "a set of one grant",
      "grantset.id",
      { grants: [c] },
      { grants_id: addressOf({ type: T, grants: [c] }) },
    ),
    okCase(
      C,
      "c19-id-empty",
      "the empty set (a run under no grant)",
      "grantset.id",
      { grants: [] },
      { grants_id: addressOf({ type: T, grants: [] }) },
    ),
    okCase(
      C,
      "c19-check",
      "a received canonical document",
      "grantset.check",
      { doc: { type: T, grants: sorted } },
      { grants_id: id },
    ),
    errCase(C, "c19-duplicate", "a grant listed twice", "grantset.id", { grants: [a, b, a] }, "BadGrantSet"),
    errCase(
      C,
      "c19-not-digest",
      "a member that is not a blake3 digest",
      "grantset.id",
      { grants: [a, "sha256:" + "0".repeat(64)] },
      "BadGrantSet",
    ),
    errCase(
      C,
      "c19-uppercase-digest",
      "a digest in uppercase hex",
      "grantset.id",
      { grants: [a.toUpperCase()] },
      "BadGrantSet",
    ),
    errCase(
      C,
      "c19-too-many",
      "257 grants",
      "grantset.id",
      { grants: Array.from({ length: 257 }, (_, i) => addressOf({ i })) },
      "BadGrantSet",
    ),
    errCase(
      C,
      "c19-check-unsorted",
      "a received document out of order",
      "grantset.check",
      { doc: { type: T, grants: [...sorted].reverse() } },
      "BadGrantSet",
    ),
    errCase(
      C,
      "c19-check-wrong-type",
      "a document of another type",
      "grantset.check",
      { doc: { type: "jcp.grant-set/2", grants: sorted } },
      "BadGrantSet",
    ),
    errCase(
      C,
      "c19-check-extra",
      "a document with an extra member",
      "grantset.check",
      { doc: { type: T, grants: sorted, note: "x" } },
      "BadGrantSet",
    ),
  ];
}

export const klass: ConformanceClass = {
  id: C,
  title: "grant sets",
  file: "grants.json",
  ops: { "grantset.id": grantSetId, "grantset.check": grantSetCheck },
  generate: vectors,
};
