// §15.7 Verifying a pool ledger: signatures by the pool's host, the hash chain from head₀, every
// entry's accounting, and conservation. A ledger that drops, double-claims or zeroes energy is refused.
import { chainNext, openEnvelope, WireError, type Digest, type Envelope } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { amount, applyEntry, newAccount, outstanding } from "./account.ts";
import { parseDescriptor, parseEntry } from "./entry.ts";
import { cloneAccount, poolGenesis, type LedgerState } from "./ledger.ts";
import { POOL_ENTRY_PAYLOAD_TYPE, POOL_PAYLOAD_TYPE, type ClaimedEntry, type PoolLedger } from "./types.ts";

/** Options for verifying a ledger. */
export interface VerifyLedgerOptions {
  /** When given, the pool's host must be one of these did:keys (`UnknownSigner`). */
  readonly hosts?: readonly string[];
  /** When true the ledger must end with a `closed` entry (`Unattributed` otherwise). */
  readonly requireClosed?: boolean;
}

/** What a verified ledger says (§15.7). */
export interface LedgerSummary {
  readonly pool_id: Digest;
  readonly name: string;
  readonly host: string;
  readonly manifest: Digest;
  readonly head: Digest;
  readonly entries: number;
  readonly items: {
    readonly provisioned: number;
    readonly resident: number;
    readonly claimed: number;
    readonly evicted: number;
  };
  readonly drawn_uj: string;
  readonly claimed_uj: string;
  readonly evicted_uj: string;
  readonly outstanding_uj: string;
  readonly closed: boolean;
  readonly claims: readonly ClaimedEntry[];
}

function shape(l: unknown): PoolLedger {
  const o = l as Record<string, unknown> | null;
  if (
    typeof o !== "object" ||
    o === null ||
    Array.isArray(o) ||
    !Array.isArray(o.entries) ||
    typeof o.pool !== "object"
  )
    throw new SandboxAttestError("BadPoolEntry", "a ledger is {pool, entries: [...]}");
  return o as unknown as PoolLedger;
}

/**
 * replayLedger verifies a ledger (§15.7) and returns its state, ready for appending. Refuses with the
 * wire codes of a bad envelope or signature, `PoolChainBroken` when an entry's seq or prev does not
 * continue the chain, and every accounting code of §15.3–§15.6.
 */
export function replayLedger(ledger: unknown, opts: VerifyLedgerOptions = {}): LedgerState {
  const l = shape(ledger);
  // §15.7: the descriptor opened and signed by its own host (BadPoolEntry), then its host trusted.
  const opened = openEnvelope(l.pool, { payloadType: POOL_PAYLOAD_TYPE });
  const descriptor = parseDescriptor(opened.payload);
  if (!opened.signers.includes(descriptor.host))
    throw new SandboxAttestError("BadPoolEntry", "the pool descriptor is not signed by its host");
  if (opts.hosts && !opts.hosts.includes(descriptor.host))
    throw new WireError("UnknownSigner", `the pool's host ${descriptor.host} is not trusted`);
  const state: LedgerState = {
    pool: l.pool,
    pool_id: opened.address,
    descriptor,
    entries: [],
    payloads: [],
    head: poolGenesis(opened.address),
    account: newAccount(descriptor.manifest, descriptor.created_ms),
  };
  for (const env of l.entries) replayOne(state, env);
  if (opts.requireClosed && !state.account.closed)
    throw new SandboxAttestError("Unattributed", "the ledger is not closed");
  return state;
}

function replayOne(s: LedgerState, env: Envelope): void {
  const { payload } = openEnvelope(env, {
    payloadType: POOL_ENTRY_PAYLOAD_TYPE,
    signers: [s.descriptor.host],
  });
  const entry = parseEntry(payload);
  if (entry.seq !== s.entries.length || entry.prev !== s.head)
    throw new SandboxAttestError(
      "PoolChainBroken",
      `entry ${s.entries.length}: seq ${entry.seq} prev ${entry.prev}, want ${s.entries.length} ${s.head}`,
    );
  applyEntry(s.account, entry);
  s.entries.push(env);
  s.payloads.push(entry);
  s.head = chainNext(s.head, entry);
}

/**
 * extendLedger continues a verified state with entries appended after it (§15.7 applied to the
 * tail only): each is checked exactly as replayLedger checks it, on a copy, so `s` is unchanged and
 * a refused tail leaves no trace. A reader that holds the state of a prefix it verified (and knows
 * the prefix's bytes are unchanged) verifies only what it has not yet verified.
 */
export function extendLedger(s: LedgerState, more: readonly unknown[]): LedgerState {
  const next = copyLedgerState(s);
  for (const env of more) replayOne(next, env as Envelope);
  return next;
}

/** copyLedgerState copies a state so that appending to the copy leaves the original as it was. */
export function copyLedgerState(s: LedgerState): LedgerState {
  return { ...s, entries: [...s.entries], payloads: [...s.payloads], account: cloneAccount(s.account) };
}

/** verifyLedger verifies a ledger (§15.7) and summarises it; refuses as replayLedger does. */
export function verifyLedger(ledger: unknown, opts: VerifyLedgerOptions = {}): LedgerSummary {
  return summarize(replayLedger(ledger, opts));
}

/** summarize reports a ledger state's counts, totals and claims. */
export function summarize(s: LedgerState): LedgerSummary {
  const items = [...s.account.items.values()];
  const count = (st: string): number => items.filter((i) => i.state === st).length;
  const claims = s.payloads.filter((e): e is ClaimedEntry => e.kind === "claimed");
  return {
    pool_id: s.pool_id,
    name: s.descriptor.name,
    host: s.descriptor.host,
    manifest: s.descriptor.manifest,
    head: s.head,
    entries: s.entries.length,
    items: {
      provisioned: items.length,
      resident: count("resident"),
      claimed: count("claimed"),
      evicted: count("evicted"),
    },
    drawn_uj: amount(s.account.drawn),
    claimed_uj: amount(s.account.claimed),
    evicted_uj: amount(s.account.evicted),
    outstanding_uj: amount(outstanding(s.account)),
    closed: s.account.closed,
    claims,
  };
}
