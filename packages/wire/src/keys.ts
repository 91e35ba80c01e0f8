// §2.10 Keys: Ed25519 key pairs from 32-byte seeds, and deterministic test keys from fixed names.
import { blake3 } from "./blake3.ts";
import { utf8 } from "./bytes.ts";
import { didKeyFromPublicKey } from "./didkey.ts";
import { ed25519 } from "./ed25519.ts";

/** An Ed25519 key pair with its did:key. The seed is the RFC 8032 private key. */
export interface KeyPair {
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
  readonly did: string;
}

/** keyPairFromSeed derives the key pair of a 32-byte seed. */
export function keyPairFromSeed(seed: Uint8Array): KeyPair {
  if (seed.length !== 32) throw new RangeError("keyPairFromSeed: seed must be 32 bytes");
  const publicKey = ed25519.publicKey(seed);
  return { seed: seed.slice(), publicKey, did: didKeyFromPublicKey(publicKey) };
}

/** generateKeyPair makes a key pair from 32 random bytes. */
export function generateKeyPair(): KeyPair {
  return keyPairFromSeed(crypto.getRandomValues(new Uint8Array(32)));
}

/** The tag of test-key derivation (§2.10): seed = BLAKE3(TEST_KEY_TAG ‖ UTF-8(name)). */
export const TEST_KEY_TAG = "sandbox-attest.testkey/1:";

/** testKey returns the fixed key pair named `name` (§2.10); vectors are signed with these only. */
export function testKey(name: string): KeyPair {
  return keyPairFromSeed(blake3(utf8(TEST_KEY_TAG + name)));
}

/** signBytes signs raw bytes with a key pair. */
export function signBytes(key: KeyPair, message: Uint8Array): Uint8Array {
  return ed25519.sign(key.seed, message);
}
