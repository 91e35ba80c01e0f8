// Fixtures for the §4.6 tests: a held root grant to alice, a policy signed by its issuer, events.
import { addressOf, testKey, payloadOf, type Envelope, type KeyPair } from "@sbx/wire";
import { createPolicy, type EventPayload, type PolicyPayload } from "../../src/standing/index.ts";
import { alice, bob, HOUR, NOW, root, rootGrant } from "../grant/fixtures.ts";

export { alice, bob, carol, codeOf, HOUR, mallory, NOW, root, rootGrant } from "../grant/fixtures.ts";
export const source = testKey("event-source");

/** The policy fields of most tests: 3 per minute, 10 children, 1 J in all, 100 mJ each. */
export function policyFields(held: Envelope, over: Partial<PolicyPayload> = {}): PolicyPayload {
  return {
    grant: addressOf(payloadOf(held)),
    issuer: root.did,
    minter: alice.did,
    triggers: [
      { type: "ci.push", source: "github" },
      { type: "alert", source: "pager", signed_by: source.did },
    ],
    template: {
      holder: bob.did,
      resources: ["/fs/work/build/**"],
      actions: ["read", "write"],
      uj: "100000",
      calls: 10,
      lifetime_ms: HOUR,
      depth: 0,
    },
    max_children: 10,
    max_total_uj: "1000000",
    rate: { count: 3, window_ms: 60_000 },
    nbf_ms: NOW - HOUR,
    exp_ms: NOW + 12 * HOUR,
    ...over,
  };
}

/** standing returns a held chain and a policy over it signed by `by` (the root issuer by default). */
export function standing(over: Partial<PolicyPayload> = {}, by: KeyPair = root) {
  const held = [rootGrant()];
  return { held, policy: createPolicy(by, policyFields(held[0]!, { issuer: by.did, ...over })) };
}

/** ev is a ci.push event from github numbered `n` at `at_ms`. */
export function ev(n: number, at_ms = NOW, over: Partial<EventPayload> = {}): EventPayload {
  return { type: "ci.push", source: "github", at_ms, id: `push-${n}`, ...over };
}
