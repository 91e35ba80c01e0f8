// §4.4 Finding a chain from its leaf: grants are content-addressed, so a store maps each address to
// its envelope and a chain is read by following parent links, bounded by the chain-length limit.
import { envelopeAddress, type Digest, type Envelope } from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { MAX_CHAIN_LENGTH } from "./limits.ts";
import { openGrant, rethrow, type GrantCache } from "./open.ts";

/** A read-only map from grant address to grant envelope. */
export type GrantStore = ReadonlyMap<Digest, Envelope>;

/**
 * grantStore indexes envelopes by address (§2.4: the address of their payload); of two with one
 * address the first given is kept (jcp §4.3). Throws `BadEnvelope` on a malformed one.
 */
export function grantStore(envelopes: Iterable<Envelope>): Map<Digest, Envelope> {
  const m = new Map<Digest, Envelope>();
  try {
    for (const e of envelopes) {
      const a = envelopeAddress(e);
      if (!m.has(a)) m.set(a, e);
    }
  } catch (e) {
    rethrow(e);
  }
  return m;
}

/**
 * chainFromStore returns the chain ending at `leaf`, root first, by following parent links (§4.4).
 * Refuses (`BrokenChain`) an address the store lacks, and (`ChainTooLong`) more than 16 links.
 * Each envelope is opened (openGrant's codes); full verification is verifyChain's work.
 */
export function chainFromStore(leaf: Digest, store: GrantStore, cache?: GrantCache): Envelope[] {
  const out: Envelope[] = [];
  let at: Digest | null = leaf;
  while (at !== null) {
    if (out.length === MAX_CHAIN_LENGTH)
      throw new JcpError("ChainTooLong", `chain of ${leaf} exceeds ${MAX_CHAIN_LENGTH} grants`);
    const env = store.get(at);
    if (!env) throw new JcpError("BrokenChain", `grant ${at} is not in the store`);
    out.push(env);
    at = openGrant(env, cache).payload.parent;
  }
  return out.reverse();
}
