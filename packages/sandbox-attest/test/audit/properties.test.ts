// Property tests of §7.7: every rearrangement of a chain other than a prefix of it is refused with
// an audit code, whatever the permutation, drop or duplication.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { testKey, type Envelope } from "@sbx/wire";
import { firstLink, linkAfter, stewardDomain, verifyAuditChain } from "../../src/audit/index.ts";
import { isSandboxAttestError } from "../../src/errors.ts";
import { attest, d, fixturePredicate, host } from "../attestation/fixture.ts";

const domain = stewardDomain(testKey("steward").did);
const N = 7;
const chain: Envelope[] = [];
for (let i = 0; i < N; i++)
  chain.push(
    attest(
      fixturePredicate({ unit_id: d(`p${i}`), ...(i === 0 ? firstLink(domain) : linkAfter(chain[i - 1]!)) }),
      host,
    ),
  );

const AUDIT = ["AuditGap", "AuditReorder", "AuditInsert", "AuditSplice", "AuditFork"] as const;
const isPrefix = (idx: readonly number[]) => idx.every((x, i) => x === i);

function outcome(idx: readonly number[]): string {
  try {
    verifyAuditChain(
      idx.map((i) => chain[i]!),
      { domain },
    );
    return "ok";
  } catch (e) {
    assert.ok(isSandboxAttestError(e), String(e));
    return e.code;
  }
}

test("a sequence of chain members verifies exactly when it is a prefix of the chain", () => {
  const seq = fc.array(fc.integer({ min: 0, max: N - 1 }), { maxLength: 10 });
  fc.assert(
    fc.property(seq, (idx) => {
      const r = outcome(idx);
      if (isPrefix(idx)) assert.equal(r, "ok", JSON.stringify(idx));
      else assert.ok((AUDIT as readonly string[]).includes(r), `${JSON.stringify(idx)} gave ${r}`);
    }),
    { numRuns: 400 },
  );
});

test("a permutation that moves anything is a reorder; dropping one that is not last is a gap", () => {
  fc.assert(
    fc.property(fc.shuffledSubarray([...Array(N).keys()], { minLength: N, maxLength: N }), (perm) => {
      assert.equal(outcome(perm), isPrefix(perm) ? "ok" : "AuditReorder", JSON.stringify(perm));
    }),
    { numRuns: 200 },
  );
  for (let i = 0; i < N - 1; i++)
    assert.equal(outcome([...Array(N).keys()].filter((x) => x !== i)), "AuditGap", `drop ${i}`);
});
