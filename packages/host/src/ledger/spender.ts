// Spending on a ledger folder (jcp §4.3) from a verified state: a writer keeps, per ledger and per
// trust setting, the SpendLedger it verified and the log mark it verified up to, and on each spend
// reads and verifies only the entries appended since (readLedgerFrom, SpendLedger.extend). A spend
// is drafted against that state, claims the position after the mark (appendLedgerAt, O(1)), and on
// StaleHead catches up with the new entries and drafts again. So n spends by one process verify each
// receipt once, not n²/2 times. The state lives only in the process; a new process replays once.
import { resolve } from "node:path";
import {
  grantStore,
  GrantCache,
  SpendLedger,
  type LedgerOptions,
  type SpendRequest,
} from "@sbx/jcp-grant/grant";
import { isHostError } from "../errors.ts";
import type { LogMark } from "../log/index.ts";
import type { Digest, Envelope, KeyPair } from "@sbx/wire";
import { appendLedgerAt, readLedger, readLedgerFrom } from "./ledger.ts";

/** A ledger as verified by this process: the mark it was verified up to, its grants and its state. */
export interface VerifiedLedger {
  mark: LogMark;
  readonly store: Map<Digest, Envelope>;
  readonly ledger: SpendLedger;
}

/** What a spend recorded: the verified ledger after it, its receipt, and how many times it lost the head. */
export interface SpendResult {
  readonly state: VerifiedLedger;
  readonly receipt: Envelope;
  readonly retries: number;
}

const states = new Map<string, VerifiedLedger>();

// One verified state per ledger and trust setting: roots, hosts and the revocation list's head.
function keyOf(path: string, opts: LedgerOptions): string {
  const rev = opts.revocations && "head" in opts.revocations ? String(opts.revocations.head) : "";
  return JSON.stringify([
    resolve(path),
    [...opts.roots].sort(),
    [...opts.hosts].sort(),
    rev,
    !!opts.effective,
  ]);
}

function fullRead(path: string, opts: LedgerOptions): VerifiedLedger {
  const file = readLedger(path);
  const store = grantStore(file.grants);
  const ledger = SpendLedger.replay(store, file.receipts, { ...opts, cache: opts.cache ?? new GrantCache() });
  return { mark: { seq: file.receipts.length, head: file.head }, store, ledger };
}

/**
 * verifiedLedger returns the ledger at `path` verified to its current head (SpendLedger's codes;
 * `BadLedger`, `LogBroken`), resuming from this process's last verified state for the same trust
 * setting when it has one. A state that no longer continues the log on disk is dropped and the log
 * read whole; a refusal drops it too.
 */
export function verifiedLedger(path: string, opts: LedgerOptions): VerifiedLedger {
  const key = keyOf(path, opts);
  const known = states.get(key);
  states.delete(key);
  let state: VerifiedLedger;
  if (!known) state = fullRead(path, opts);
  else {
    let tail;
    try {
      tail = readLedgerFrom(path, known.mark);
    } catch (e) {
      if (!isHostError(e, "LogBroken")) throw e;
      tail = null; // not the log this state was verified from: verify it whole (and refuse it if broken)
    }
    if (tail === null) state = fullRead(path, opts);
    else {
      for (const [a, g] of grantStore(tail.grants)) known.store.set(a, g);
      known.ledger.extend(known.store, tail.receipts);
      known.mark = tail.mark;
      state = known;
    }
  }
  states.set(key, state);
  return state;
}

/**
 * spendOn records one spend under `chain`'s leaf on the ledger at `path` (jcp §4.3): verified from
 * the last state, drafted (SpendLedger.draft's refusals: Overspend, Expired, Revoked, …), appended
 * by claiming the position after the verified head; on StaleHead it catches up and drafts again,
 * at most `maxRetries` times. `at` gives the spend's time, taken after each catch-up.
 */
export function spendOn(
  path: string,
  chain: readonly Envelope[],
  host: KeyPair,
  req: SpendRequest,
  opts: LedgerOptions,
  at: () => number,
  maxRetries = 10_000,
): SpendResult {
  for (let retries = 0; ; retries++) {
    const state = verifiedLedger(path, opts);
    const receipt = state.ledger.draft(chain, host, req, at());
    const fresh = [...grantStore(chain).entries()].filter(([a]) => !state.store.has(a));
    try {
      state.mark = appendLedgerAt(
        path,
        state.mark,
        fresh.map(([, g]) => g),
        receipt,
      );
    } catch (e) {
      if (isHostError(e, "StaleHead") && retries < maxRetries) continue;
      states.delete(keyOf(path, opts));
      throw e;
    }
    for (const [a, g] of fresh) state.store.set(a, g);
    state.ledger.extend(state.store, [receipt]);
    return { state, receipt, retries };
  }
}
