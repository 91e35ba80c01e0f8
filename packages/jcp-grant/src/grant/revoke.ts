// §4.5 Revocation: an append-only, hash-chained list of signed revocations. An issuer anywhere on a
// chain may revoke the grant it issued or any grant below it; a revocation invalidates that grant
// and its descendants and nothing else. Authority is checked where the list is used (verifyChain).
import {
  chainGenesis,
  chainNext,
  isDidKey,
  isDigest,
  signPayload,
  type Digest,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { REVOCATION_PAYLOAD_TYPE } from "./limits.ts";
import { openSigned } from "./open.ts";
import { resolveChain, type ResolveOptions } from "./verify.ts";

/** The chain tag of a revocation list: head₀ = BLAKE3("jcp.revocation/1"). */
export const REVOCATION_TAG = "jcp.revocation/1";

/** One revocation as signed by its revoker (§4.5). */
export interface RevocationPayload {
  readonly grant: Digest;
  readonly by: string;
  readonly seq: number;
  readonly prev: Digest;
  readonly at_ms: number;
}

/** Who revoked a grant and from when. */
export interface RevocationEntry {
  readonly by: string;
  readonly at_ms: number;
}

/** What chain verification asks of a revocation list. */
export interface RevocationIndex {
  revocationsOf(address: Digest): readonly RevocationEntry[];
}

const KEYS = "at_ms,by,grant,prev,seq";

function checkRevocation(v: Record<string, unknown>): RevocationPayload {
  if (Object.keys(v).sort().join(",") !== KEYS)
    throw new JcpError("BadRevocation", `a revocation has exactly the members ${KEYS}`);
  if (!isDigest(v.grant) || !isDigest(v.prev))
    throw new JcpError("BadRevocation", "grant and prev must be digests");
  if (!isDidKey(v.by)) throw new JcpError("BadRevocation", "by must be an Ed25519 did:key");
  for (const k of ["seq", "at_ms"] as const)
    if (typeof v[k] !== "number" || !Number.isSafeInteger(v[k]) || v[k] < 0)
      throw new JcpError("BadRevocation", `${k} must be a non-negative integer`);
  return v as unknown as RevocationPayload;
}

function openRevocation(env: unknown): RevocationPayload {
  const opened = openSigned(env, REVOCATION_PAYLOAD_TYPE, 4096, "BadRevocation");
  const r = checkRevocation(opened.payload);
  if (opened.signers.length !== 1 || opened.signers[0] !== r.by)
    throw new JcpError("BadSignature", "a revocation carries one signature, its revoker's");
  return r;
}

/** A verified revocation list: its entries, head and an index by revoked grant. */
export class RevocationList implements RevocationIndex {
  readonly #entries: Envelope[] = [];
  readonly #heads: Digest[] = [chainGenesis(REVOCATION_TAG, [])];
  readonly #by = new Map<Digest, RevocationEntry[]>();
  #last_ms = 0;

  /**
   * verify checks a list (§4.5): each entry's signature by its revoker (`BadSignature`, wire codes),
   * its form (`BadRevocation`), `seq` = position from 1, `prev` = the head before it and `at_ms`
   * never decreasing (`BrokenRevocationList`). With `prefix`, the list must extend the one whose
   * head after `prefix.length` entries was `prefix.head` (`BrokenRevocationList`).
   */
  static verify(
    entries: readonly unknown[],
    prefix?: { readonly length: number; readonly head: Digest },
  ): RevocationList {
    const list = new RevocationList();
    for (const env of entries) list.#add(env as Envelope, openRevocation(env));
    if (prefix && list.headAt(prefix.length) !== prefix.head)
      throw new JcpError("BrokenRevocationList", `the list does not extend the one with head ${prefix.head}`);
    return list;
  }

  #add(env: Envelope, r: RevocationPayload): void {
    if (r.seq !== this.#entries.length + 1 || r.prev !== this.head)
      throw new JcpError(
        "BrokenRevocationList",
        `entry ${this.#entries.length + 1} does not follow head ${this.head}`,
      );
    if (r.at_ms < this.#last_ms)
      throw new JcpError("BrokenRevocationList", `entry ${r.seq} is dated before the one above it`);
    this.#entries.push(env);
    this.#heads.push(chainNext(this.head, r));
    this.#last_ms = r.at_ms;
    const list = this.#by.get(r.grant) ?? [];
    list.push({ by: r.by, at_ms: r.at_ms });
    this.#by.set(r.grant, list);
  }

  /** The current head: chainNext over every entry's payload from head₀. */
  get head(): Digest {
    return this.#heads[this.#heads.length - 1]!;
  }
  /** The number of entries. */
  get length(): number {
    return this.#entries.length;
  }
  /** The head after the first n entries (undefined past the end). */
  headAt(n: number): Digest | undefined {
    return this.#heads[n];
  }
  /** The signed entries, oldest first. */
  get entries(): readonly Envelope[] {
    return this.#entries;
  }
  /** Every revocation of the grant at `address`, authorised or not (verifyChain checks authority). */
  revocationsOf(address: Digest): readonly RevocationEntry[] {
    return this.#by.get(address) ?? [];
  }

  /**
   * revoke appends a revocation by `revoker` of the last grant of `chain` (root first) at `at_ms`
   * (§4.5). The chain is resolved (resolveChain's codes); refuses (`NotAuthorized`) a revoker that
   * issued no grant on it, and (`BrokenRevocationList`) a time before the last entry's.
   */
  revoke(chain: readonly unknown[], revoker: KeyPair, at_ms: number, opts: ResolveOptions = {}): Envelope {
    const grants = resolveChain(chain, opts);
    if (!grants.some((g) => g.issuer === revoker.did))
      throw new JcpError("NotAuthorized", `${revoker.did} issued no grant on this chain`);
    const payload: RevocationPayload = {
      grant: grants[grants.length - 1]!.address,
      by: revoker.did,
      seq: this.length + 1,
      prev: this.head,
      at_ms,
    };
    const env = signPayload(REVOCATION_PAYLOAD_TYPE, payload, revoker);
    this.#add(env, payload);
    return env;
  }
}
