// §15.1–§15.2 Writing a pool ledger: a signed descriptor whose address is the pool id, then signed
// entries chained from head₀ = BLAKE3("sandbox.warmpool/1" ‖ pool_id). Every entry is checked
// against the pool's accounting before it is signed, so a writer cannot produce what a verifier refuses.
import {
  chainGenesis,
  chainNext,
  envelopeAddress,
  signPayload,
  type Digest,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { applyEntry, newAccount, type PoolAccount } from "./account.ts";
import { parseDescriptor, parseEntry } from "./entry.ts";
import {
  POOL_CHAIN_TAG,
  POOL_ENTRY_PAYLOAD_TYPE,
  POOL_PAYLOAD_TYPE,
  type PoolDescriptor,
  type PoolEntry,
} from "./types.ts";

/** The state of an open ledger: where the chain stands and the pool's accounting. */
export interface LedgerState {
  readonly pool: Envelope;
  readonly pool_id: Digest;
  readonly descriptor: PoolDescriptor;
  readonly entries: Envelope[];
  /** The entries' payloads, in order. */
  readonly payloads: PoolEntry[];
  head: Digest;
  account: PoolAccount;
}

/** An entry as the writer states it; `seq` and `prev` are filled in from the chain. */
export type EntryBody = PoolEntry extends infer E
  ? E extends PoolEntry
    ? Omit<E, "seq" | "prev">
    : never
  : never;

/** poolGenesis returns head₀ of a pool's ledger (§15.2). */
export function poolGenesis(poolId: Digest): Digest {
  return chainGenesis(POOL_CHAIN_TAG, [poolId]);
}

/**
 * createPool signs a pool descriptor with the host key and returns the empty ledger's state (§15.1).
 * Throws `BadPoolEntry` when the descriptor is malformed or its host is not the signing key.
 */
export function createPool(d: Omit<PoolDescriptor, "kind" | "host">, host: KeyPair): LedgerState {
  const descriptor = parseDescriptor({
    kind: "pool",
    name: d.name,
    host: host.did,
    manifest: d.manifest,
    created_ms: d.created_ms,
  });
  const pool = signPayload(POOL_PAYLOAD_TYPE, descriptor, host);
  const pool_id = envelopeAddress(pool);
  return {
    pool,
    pool_id,
    descriptor,
    entries: [],
    payloads: [],
    head: poolGenesis(pool_id),
    account: newAccount(descriptor.manifest, descriptor.created_ms),
  };
}

/**
 * appendEntry checks `body` against the ledger's accounting (§15.3–§15.6), signs it as the next
 * entry, and advances the state. Throws the spec code of the first rule the entry breaks, leaving the
 * state unchanged.
 */
export function appendEntry(s: LedgerState, body: EntryBody, host: KeyPair): Envelope {
  const entry = parseEntry({ ...body, seq: s.entries.length, prev: s.head } as never);
  const trial = cloneAccount(s.account);
  applyEntry(trial, entry);
  const env = signPayload(POOL_ENTRY_PAYLOAD_TYPE, entry, host);
  s.account = trial;
  s.entries.push(env);
  s.payloads.push(entry);
  s.head = chainNext(s.head, entry);
  return env;
}

/** cloneAccount copies an account deeply enough that a refused entry changes nothing. */
export function cloneAccount(a: PoolAccount): PoolAccount {
  const items = new Map([...a.items].map(([k, v]) => [k, { ...v }]));
  return { ...a, items };
}
