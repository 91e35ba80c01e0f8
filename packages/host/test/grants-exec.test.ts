// jcp §4.2 exec resources onto the exec gate (sandbox-attest §5.6 item 6): what a scope grants to
// execute, and its composition with a run's own exec policy (both hold; deny wins).
import { test } from "node:test";
import assert from "node:assert/strict";
import { makePolicy } from "@sbx/sandbox-attest/execpolicy";
import { execGrant, grantExecPolicy } from "../src/grants/index.ts";

const d = (c: string) => `blake3:${c.repeat(64)}` as const;
const scope = (resources: string[], actions: string[]) => ({ resources, actions });

test("exec resources: unsaid, any, exactly the digests, or nothing without the exec action", () => {
  assert.deepEqual(execGrant(scope(["/fs/work/**"], ["read"])), { kind: "unsaid" });
  assert.deepEqual(execGrant(scope(["/exec/**", "/fs/work/**"], ["exec", "read"])), { kind: "any" });
  assert.deepEqual(execGrant(scope(["/exec/*"], ["exec"])), { kind: "any" });
  assert.deepEqual(execGrant(scope([`/exec/${d("a")}`, `/exec/${d("b")}`], ["exec"])), {
    kind: "digests",
    digests: [d("a"), d("b")],
  });
  // Named without the exec action, or not a digest: grants nothing (fail closed).
  assert.deepEqual(execGrant(scope([`/exec/${d("a")}`], ["read"])), { kind: "digests", digests: [] });
  assert.deepEqual(execGrant(scope(["/exec/sh"], ["exec"])), { kind: "digests", digests: [] });
});

test("a grant's exec allowlist composes with a run's policy: both hold, deny wins", () => {
  const granted = scope([`/exec/${d("a")}`, `/exec/${d("b")}`], ["exec"]);
  assert.equal(grantExecPolicy(scope(["/fs/work/**"], ["read"]), null), null);
  const given = makePolicy("denylist", [], [d("b")]);
  assert.equal(grantExecPolicy(scope(["/exec/**"], ["exec"]), given), given);
  assert.deepEqual(grantExecPolicy(granted, null), makePolicy("allowlist", [d("a"), d("b")]));
  assert.deepEqual(grantExecPolicy(granted, given), makePolicy("allowlist", [d("a"), d("b")], [d("b")]));
  const only = makePolicy("allowlist", [d("b"), d("c")]);
  assert.deepEqual(grantExecPolicy(granted, only), makePolicy("allowlist", [d("b")]));
});
