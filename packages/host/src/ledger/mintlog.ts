// The mint ledger on disk (jcp §4.6), on the one append-only log (@sbx/host/log): a folder whose
// entries are each one minted child as `{entry, event, child}` (the signed ledger entry, the event it
// cites and the child grant), never rewritten. A mint reads the log, verifies every entry into the
// policy's book (StandingMinter.resume), mints on that state and appends on exactly the head it read:
// the checks of the caps, the total and the rate and the append are one step, so concurrent minters
// can never pass them together; a minter that loses the head (StaleHead) reads again and mints again
// on the new state (where the rate or a cap may now refuse it).
import { existsSync } from "node:fs";
import { canonicalBytes, parseStrict, payloadOf, type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import { StandingMinter, type LedgerFiles, type Minted, type StandingGrant } from "@sbx/jcp-grant/standing";
import type { ResolveOptions } from "@sbx/jcp-grant/grant";
import { HostError, isHostError } from "../errors.ts";
import { appendLog, isLog, readLog } from "../log/index.ts";

/** A mint ledger as read: its entries, the events and children they cite, and the log's head. */
export interface MintLog extends LedgerFiles {
  readonly entries: Envelope[];
  readonly events: unknown[];
  readonly children: Envelope[];
  readonly head: Digest;
}

const MAX_ENTRY_BYTES = 64 << 10;

/**
 * readMintLog reads a mint ledger folder read-only; a missing one is empty. A whole-file ledger of
 * an older jcp (a JSON file) or an entry that is not `{entry, event, child}` is unusable input
 * (`BadLedger`, exit 2); whether the entries verify is verifyMintLedger's to say.
 */
export function readMintLog(path: string): MintLog {
  if (existsSync(path) && !isLog(path))
    throw new HostError(
      "BadLedger",
      `${path} is a file: a mint ledger is now an append-only folder (jcp §4.6); give a new path`,
    );
  const { entries, head } = readLog(path);
  const out: MintLog = { entries: [], events: [], children: [], head };
  for (const e of entries) {
    let v: unknown;
    try {
      v = parseStrict(e.payload, { maxBytes: MAX_ENTRY_BYTES, maxDepth: 64 });
    } catch (err) {
      throw new HostError("BadLedger", `${path}: entry ${e.seq} is not JSON`, { cause: err });
    }
    const o = v as { entry?: unknown; event?: unknown; child?: unknown } | null;
    if (
      o === null ||
      typeof o !== "object" ||
      Object.keys(o).sort().join(",") !== "child,entry,event" ||
      typeof o.entry !== "object" ||
      typeof o.child !== "object"
    )
      throw new HostError("BadLedger", `${path}: entry ${e.seq} is not {entry, event, child}`);
    out.entries.push(o.entry as Envelope);
    out.events.push(o.event);
    out.children.push(o.child as Envelope);
  }
  return out;
}

/** What one mint on the log did: the child and its chain, the ledger's length after it, and retries. */
export interface MintResult extends Minted {
  /** The child's address (the ledger entry's `child`). */
  readonly childAddress: Digest;
  readonly seq: number;
  readonly head: Digest;
  readonly total_uj: bigint;
  readonly retries: number;
}

/**
 * mintOn mints one child for `event` on the mint ledger at `path` (jcp §4.6): the log is read and
 * every entry verified (verifyMintLedger's codes), the child minted on that state at `at()`
 * (StandingMinter.mint's refusals: RateExceeded, MintCapExceeded, MintBudgetExceeded,
 * EventReplayed, TriggerMismatch, …) and appended on the head read; on StaleHead the log is read
 * again, at most `maxRetries` times. The log is created when missing.
 */
export function mintOn(
  path: string,
  standing: StandingGrant,
  minter: KeyPair,
  event: unknown,
  at: () => number,
  opts: ResolveOptions = {},
  maxRetries = 10_000,
): MintResult {
  for (let retries = 0; ; retries++) {
    const log = readMintLog(path);
    const m = StandingMinter.resume(standing, minter, log, opts);
    const minted = m.mint(event, at());
    try {
      appendLog(path, log.head, canonicalBytes({ entry: minted.entry, event, child: minted.child }));
    } catch (e) {
      if (isHostError(e, "StaleHead") && retries < maxRetries) continue;
      throw e;
    }
    const { child: childAddress } = payloadOf(minted.entry) as { child: Digest };
    return {
      ...minted,
      childAddress,
      seq: m.book.length,
      head: m.book.head,
      total_uj: m.book.total,
      retries,
    };
  }
}
