// C15: delegation depth (jcp §4.4). Depth strictly decreases; a depth-0 grant cannot delegate; an
// omitted depth is the parent's minus one; chains longer than 16 are refused before any signature.
import type { Envelope, KeyPair } from "@sbx/wire";
import { errCase, okCase } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
import {
  ALICE,
  BOB,
  CAROL,
  childPayload,
  expected,
  ROOT,
  rootPayload,
  sign,
  verifyInput,
} from "./grants/fixtures.ts";

const C = "C15" as const;

function line(rootDepth: number, n: number, depthOf: (i: number) => number | undefined): Envelope[] {
  const chain = [sign(rootPayload({ depth: rootDepth }), ROOT)];
  const ks: KeyPair[] = [ALICE, BOB];
  for (let i = 1; i < n; i++) {
    const d = depthOf(i);
    chain.push(
      sign(
        childPayload(
          chain[i - 1]!,
          ks[(i - 1) % 2]!,
          ks[i % 2]!,
          `depth-${rootDepth}-${n}-${i}-${d ?? "x"}`,
          d === undefined ? {} : { depth: d },
        ),
        ks[(i - 1) % 2]!,
      ),
    );
  }
  return chain;
}

function vectors(): Vector[] {
  const inherit = line(2, 3, () => undefined);
  const full = line(15, 16, () => undefined);
  const out: Vector[] = [
    okCase(
      C,
      "c15-inherit",
      "an omitted depth is the parent's minus one",
      "chain.verify",
      verifyInput(inherit),
      expected(inherit),
    ),
    okCase(
      C,
      "c15-longest",
      "root depth 15 and 16 grants: the longest chain",
      "chain.verify",
      verifyInput(full),
      expected(full),
    ),
    errCase(
      C,
      "c15-exhausted",
      "a child of a depth-0 grant",
      "chain.verify",
      verifyInput(line(0, 2, () => undefined)),
      "DepthExhausted",
    ),
    errCase(
      C,
      "c15-exhausted-below",
      "the third link under a depth-1 root",
      "chain.verify",
      verifyInput(line(1, 3, () => undefined)),
      "DepthExhausted",
    ),
    errCase(
      C,
      "c15-equal",
      "a child stating its parent's depth",
      "chain.verify",
      verifyInput(line(3, 2, () => 3)),
      "DepthExhausted",
    ),
    errCase(
      C,
      "c15-deeper",
      "a child stating more depth than its parent",
      "chain.verify",
      verifyInput(line(3, 2, () => 15)),
      "DepthExhausted",
    ),
  ];
  const tooLong = [...full, sign(childPayload(full[15]!, ALICE, CAROL, "depth-17"), ALICE)];
  out.push(
    errCase(
      C,
      "c15-too-long",
      "17 grants: refused by length before any signature",
      "chain.verify",
      verifyInput(tooLong),
      "ChainTooLong",
    ),
  );
  out.push(
    errCase(
      C,
      "c15-too-long-junk",
      "17 entries that are not even grants: still ChainTooLong first",
      "chain.verify",
      { ...verifyInput([]), chain: Array.from({ length: 17 }, () => ({})) },
      "ChainTooLong",
    ),
  );
  return out;
}

export const klass: ConformanceClass = {
  id: C,
  title: "delegation depth",
  file: "grants.json",
  ops: {},
  generate: vectors,
};
