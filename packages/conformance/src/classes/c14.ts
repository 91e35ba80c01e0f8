// C14: validity windows (jcp §4.1, §4.4). nbf_ms inclusive, exp_ms exclusive, every grant's window
// checked at the verification time, a child's window inside its parent's.
import type { JsonObject } from "@sbx/wire";
import { errCase, okCase } from "../generate/build.ts";
import type { ConformanceClass, Vector } from "../types.ts";
import {
  ALICE,
  BOB,
  childPayload,
  expected,
  HOUR,
  ROOT,
  rootExpZero,
  rootPayload,
  sign,
  standardChain,
  T0,
  verifyInput,
} from "./grants/fixtures.ts";

const C = "C14" as const;

function child(fields: JsonObject, label: string) {
  const r = sign(rootPayload(), ROOT);
  return [r, sign(childPayload(r, ALICE, BOB, label, fields), ALICE)];
}

function vectors(): Vector[] {
  const chain = standardChain(); // root [T0 − 1 h, T0 + 24 h), leaf exp T0 + 12 h
  const times: [string, number, string | null][] = [
    ["at-nbf", T0 - HOUR, null],
    ["before-nbf", T0 - HOUR - 1, "NotYetValid"],
    ["last-ms", T0 + 12 * HOUR - 1, null],
    ["at-leaf-exp", T0 + 12 * HOUR, "Expired"],
    ["after-root-exp", T0 + 24 * HOUR, "Expired"],
  ];
  const out = times.map(([id, at, code]) =>
    code === null
      ? okCase(
          C,
          `c14-time-${id}`,
          `verified at ${id}`,
          "chain.verify",
          verifyInput(chain, at),
          expected(chain, at),
        )
      : errCase(C, `c14-time-${id}`, `verified at ${id}`, "chain.verify", verifyInput(chain, at), code),
  );
  const inside = child({ nbf_ms: T0, exp_ms: T0 + HOUR }, "window-inside");
  out.push(
    okCase(
      C,
      "c14-child-inside",
      "a child window inside its parent's",
      "chain.verify",
      verifyInput(inside, T0),
      expected(inside, T0),
    ),
  );
  out.push(
    errCase(
      C,
      "c14-child-before-own-nbf",
      "inside the root's window but before the child's nbf",
      "chain.verify",
      verifyInput(inside, T0 - 1),
      "NotYetValid",
    ),
  );
  out.push(
    errCase(
      C,
      "c14-child-exp-later",
      "a child expiring after its parent",
      "chain.verify",
      verifyInput(child({ exp_ms: T0 + 24 * HOUR + 1 }, "window-late"), T0),
      "WindowWidens",
    ),
  );
  out.push(
    errCase(
      C,
      "c14-child-nbf-earlier",
      "a child valid before its parent",
      "chain.verify",
      verifyInput(child({ nbf_ms: T0 - 2 * HOUR }, "window-early"), T0),
      "WindowWidens",
    ),
  );
  out.push(
    errCase(
      C,
      "c14-child-empty-by-inheritance",
      "an inherited nbf at or after the child's own exp",
      "chain.verify",
      verifyInput(child({ exp_ms: T0 - HOUR }, "window-empty"), T0),
      "BadGrant",
    ),
    errCase(
      C,
      "c14-root-window-empty",
      "a root with exp_ms 0 and no nbf_ms: its default window [0, 0) is empty (jcp §4.4 step 2)",
      "chain.verify",
      verifyInput([sign(rootExpZero(), ROOT)], T0),
      "BadGrant",
    ),
  );
  return out;
}

export const klass: ConformanceClass = {
  id: C,
  title: "validity windows",
  file: "grants.json",
  ops: {},
  generate: vectors,
};
