// The fixed test keys vectors are signed with (sandbox-attest §2.10), listed by name in every file.
import { testKey, type KeyPair } from "@sbx/wire";

/** The names of the test keys the generators use. Add a name here before using it. */
export const TEST_KEY_NAMES = [
  "steward",
  "host",
  "host-2",
  "root-issuer",
  "alice",
  "bob",
  "carol",
  "dave",
  "mallory",
  "minter",
  "event-source",
] as const;

/** A test key's name. */
export type TestKeyName = (typeof TEST_KEY_NAMES)[number];

/** key returns the fixed key pair of a named test key. */
export function key(name: TestKeyName): KeyPair {
  return testKey(name);
}

/** usedTestKeys maps every test key name to its did:key. */
export function usedTestKeys(): Record<string, string> {
  return Object.fromEntries(TEST_KEY_NAMES.map((n) => [n, testKey(n).did]));
}
