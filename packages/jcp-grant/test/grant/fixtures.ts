// Shared fixtures for the grant tests: fixed keys, a fixed time, and chain builders.
import { testKey, type Envelope, type KeyPair } from "@sbx/wire";
import { attenuate, issueGrant, type ChildFields, type RootFields } from "../../src/index.ts";

export const root = testKey("root-issuer");
export const alice = testKey("alice");
export const bob = testKey("bob");
export const carol = testKey("carol");
export const dave = testKey("dave");
export const mallory = testKey("mallory");
export const host = testKey("host");
/** The fixed "now" of the tests: 2026-01-01T00:00:00Z. */
export const NOW = 1_767_225_600_000;
export const HOUR = 3_600_000;

/** A root grant to alice with a 5 J budget, valid for a day from an hour ago, depth 4. */
export function rootGrant(over: Partial<RootFields> = {}): Envelope {
  return issueGrant(root, {
    holder: alice.did,
    resources: ["/fs/work/**", "/net/api.example.com/**"],
    actions: ["read", "write"],
    uj: "5000000",
    calls: 100,
    nbf_ms: NOW - HOUR,
    exp_ms: NOW + 24 * HOUR,
    depth: 4,
    nonce: "00000000000000000000000000000001",
    ...over,
  });
}

/** extend attenuates the last grant of `chain` by `by` and returns the longer chain. */
export function extend(chain: readonly Envelope[], by: KeyPair, fields: ChildFields): Envelope[] {
  return [...chain, attenuate(chain, by, fields)];
}

/** codeOf runs `f` and returns the code it throws, or "ok". */
export function codeOf(f: () => unknown): string {
  try {
    f();
    return "ok";
  } catch (e) {
    const c = (e as { code?: unknown }).code;
    if (typeof c !== "string") throw e;
    return c;
  }
}
