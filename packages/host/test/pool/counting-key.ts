// A host key that counts its signatures, for the pool claim tests (poollog.test.ts, claim-worker.ts):
// wire's signBytes reads a key pair's seed once per signature, so counting the reads of the seed
// counts the signatures made with it.
import type { KeyPair } from "@sbx/wire";

/** countingKey wraps `key`; taken() returns how many signatures it made since the last taken(). */
export function countingKey(key: KeyPair): { key: KeyPair; taken: () => number } {
  let signed = 0;
  const counted: KeyPair = {
    publicKey: key.publicKey,
    did: key.did,
    get seed() {
      signed++;
      return key.seed;
    },
  };
  const taken = () => {
    const n = signed;
    signed = 0;
    return n;
  };
  return { key: counted, taken };
}
