// §5.5.2–§5.5.4: policy form, signing, and the decision function against a literal reference.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { addressOf, digestBytes, isWireError, signPayload, testKey, type Digest } from "@sbx/wire";
import { isSandboxAttestError } from "../../src/errors.ts";
import {
  EXEC_POLICY_PAYLOAD_TYPE,
  checkDecision,
  decide,
  makePolicy,
  openPolicy,
  parsePolicy,
  policyAddress,
  signPolicy,
  withDigests,
  type ExecPolicy,
} from "@sbx/sandbox-attest/execpolicy";

const d = (s: string): Digest => digestBytes(new TextEncoder().encode(s));
const [A, B, C] = [d("a"), d("b"), d("c")];
const steward = testKey("steward");

/** The reference decision, written as the spec's sentences (§5.5.4). */
function reference(p: ExecPolicy, x: Digest): boolean {
  for (const y of p.deny) if (y === x) return false;
  if (p.mode === "denylist") return true;
  for (const y of p.allow) if (y === x) return true;
  return false;
}

test("makePolicy sorts and deduplicates; the address is the JCS digest", () => {
  const p = makePolicy("allowlist", [C, A, C, B], [B, B]);
  assert.deepEqual(p.allow, [A, B, C].sort());
  assert.deepEqual(p.deny, [B]);
  assert.equal(policyAddress(p), addressOf(p));
  assert.deepEqual(parsePolicy(JSON.parse(JSON.stringify(p))), p);
});

test("parsePolicy refuses every malformed form by code", () => {
  const p = makePolicy("denylist", [A, B], [C]);
  const cases: [unknown, string][] = [
    [{ ...p, extra: 1 }, "BadExecPolicy"],
    [{ ...p, mode: "both" }, "BadExecPolicy"],
    [{ ...p, type: "x" }, "BadExecPolicy"],
    [{ ...p, allow: "x" }, "BadExecPolicy"],
    [{ ...p, allow: [...p.allow].reverse() }, "ExecPolicyUnsorted"],
    [{ ...p, deny: [C, C] }, "ExecPolicyDuplicate"],
    [{ ...p, deny: ["sha256:00"] }, "ExecPolicyBadDigest"],
    [{ ...p, deny: [C.toUpperCase()] }, "ExecPolicyBadDigest"],
    [[], "BadExecPolicy"],
  ];
  cases.forEach(([v, code], i) =>
    assert.throws(
      () => parsePolicy(v),
      (e) => isSandboxAttestError(e) && e.code === code,
      `case ${i}`,
    ),
  );
});

test("signed policies open; tampering, wrong type and wrong signer are refused", () => {
  const p = makePolicy("denylist", [], [A]);
  const env = signPolicy(p, steward);
  const o = openPolicy(env, { stewards: [steward.did], address: policyAddress(p) });
  assert.deepEqual(o.policy, p);
  assert.equal(o.address, policyAddress(p));
  assert.throws(
    () => openPolicy(env, { stewards: [testKey("mallory").did] }),
    (e) => isWireError(e, "UnknownSigner"),
  );
  assert.throws(
    () => openPolicy({ ...env, payloadType: "application/json" }),
    (e) => isWireError(e, "WrongPayloadType"),
  );
  const bad = signPayload(EXEC_POLICY_PAYLOAD_TYPE, { ...p, mode: "nope" }, steward);
  assert.throws(
    () => openPolicy(bad),
    (e) => isSandboxAttestError(e, "BadExecPolicy"),
  );
  assert.throws(
    () => openPolicy(env, { address: d("other") }),
    (e) => isSandboxAttestError(e, "ExecPolicyMismatch"),
  );
});

test("deny is absolute: listed on both lists, in either mode, is refused", () => {
  for (const mode of ["allowlist", "denylist"]) {
    const v = decide(makePolicy(mode, [A], [A]), A);
    assert.deepEqual(v, { allowed: false, rule: "denied" });
  }
  assert.deepEqual(decide(makePolicy("allowlist", [A]), B), { allowed: false, rule: "not-allowed" });
  assert.deepEqual(decide(makePolicy("denylist", [], [A]), B), { allowed: true, rule: "default" });
});

test("decide agrees with the reference on random policies", () => {
  const pool = Array.from({ length: 12 }, (_, i) => d(`x${i}`));
  const dig = fc.constantFrom(...pool);
  fc.assert(
    fc.property(
      fc.constantFrom("allowlist", "denylist"),
      fc.array(dig),
      fc.array(dig),
      dig,
      (mode, allow, deny, x) => {
        const p = makePolicy(mode, allow, deny);
        assert.equal(decide(p, x).allowed, reference(p, x));
      },
    ),
    { numRuns: 500 },
  );
});

test("withDigests adds and removes, keeping canonical form", () => {
  const p = withDigests(withDigests(makePolicy("allowlist"), "allow", "add", [C, A]), "allow", "remove", [C]);
  assert.deepEqual(p.allow, [A]);
  assert.throws(
    () => withDigests(p, "deny", "add", ["nope"]),
    (e) => isSandboxAttestError(e, "ExecPolicyBadDigest"),
  );
});

test("checkDecision refuses records whose rule contradicts the outcome", () => {
  const ok = {
    digest: A,
    path: "/x",
    route: "direct",
    rule: "denied",
    allowed: false,
    source: "cache",
    pid: 1,
  } as const;
  assert.equal(checkDecision(ok), ok);
  assert.throws(
    () => checkDecision({ ...ok, allowed: true }),
    (e) => isSandboxAttestError(e, "ExecPolicyMismatch"),
  );
  assert.throws(
    () => checkDecision({ ...ok, rule: "allowed", allowed: true, digest: null }),
    (e) => isSandboxAttestError(e, "ExecPolicyMismatch"),
  );
});
