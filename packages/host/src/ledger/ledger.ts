// The spend ledger on disk (jcp §4.3): an append-only log (@sbx/host/log) whose entries are each one
// receipt plus the grant envelopes it cites that no earlier entry carried. Never rewritten: a spend
// claims the head it was built against, and a writer that lost the race rebuilds from the new head.
import { existsSync } from "node:fs";
import { canonicalBytes, parseStrict, type Envelope, type Digest } from "@sbx/wire";
import { appendLog, appendLogAt, isLog, readLog, readLogFrom, type LogMark } from "../log/index.ts";
import { HostError } from "../errors.ts";

/** A ledger as read: every grant envelope and receipt in entry order, and the log's head. */
export interface LedgerState {
  readonly grants: Envelope[];
  readonly receipts: Envelope[];
  readonly head: Digest;
}

const MAX_ENTRY_BYTES = 1 << 20;

/**
 * readLedger reads a ledger folder read-only; a missing one is empty. A whole-file ledger of an
 * older jcp (a JSON file) or a malformed entry is unusable input (`BadLedger`, exit 2).
 */
export function readLedger(path: string): LedgerState {
  if (existsSync(path) && !isLog(path))
    throw new HostError(
      "BadLedger",
      `${path} is a file: a ledger is now an append-only folder (jcp §4.3); give a new path`,
    );
  const { entries, head } = readLog(path);
  const grants: Envelope[] = [];
  const receipts: Envelope[] = [];
  for (const e of entries) {
    const o = entryOf(path, e.seq, e.payload);
    grants.push(...o.grants);
    receipts.push(o.receipt);
  }
  return { grants, receipts, head };
}

// One entry's {grants, receipt}; BadLedger for anything else.
function entryOf(path: string, seq: number, payload: Uint8Array): { grants: Envelope[]; receipt: Envelope } {
  let v: unknown;
  try {
    v = parseStrict(payload, { maxBytes: MAX_ENTRY_BYTES, maxDepth: 64 });
  } catch (err) {
    throw new HostError("BadLedger", `${path}: entry ${seq} is not JSON`, { cause: err });
  }
  const o = v as { grants?: unknown; receipt?: unknown } | null;
  if (!o || typeof o !== "object" || !Array.isArray(o.grants) || !o.receipt || typeof o.receipt !== "object")
    throw new HostError("BadLedger", `${path}: entry ${seq} is not {grants, receipt}`);
  return { grants: o.grants as Envelope[], receipt: o.receipt as Envelope };
}

/**
 * readLogJson reads a log folder's entries as JSON values (each at most 1 MiB, the strict parser);
 * a malformed entry is `BadLedger`.
 */
export function readLogJson(path: string): { values: unknown[]; head: Digest } {
  const { entries, head } = readLog(path);
  const values = entries.map((e) => {
    try {
      return parseStrict(e.payload, { maxBytes: MAX_ENTRY_BYTES, maxDepth: 64 });
    } catch (err) {
      throw new HostError("BadLedger", `${path}: entry ${e.seq} is not JSON`, { cause: err });
    }
  });
  return { values, head };
}

/** appendLogJson appends one JSON value (its canonical bytes) after `head`; StaleHead if it moved. */
export function appendLogJson(path: string, head: Digest, value: unknown): Digest {
  return appendLog(path, head, canonicalBytes(value));
}

/** appendLedger appends one receipt (and grants new to the ledger) after `head`; StaleHead if it moved. */
export function appendLedger(
  path: string,
  head: Digest,
  grants: readonly Envelope[],
  receipt: Envelope,
): Digest {
  return appendLog(path, head, canonicalBytes({ grants, receipt }));
}

/** What a ledger holds after a mark: the new entries' grants and receipts, and the mark after them. */
export interface LedgerTail {
  readonly grants: Envelope[];
  readonly receipts: Envelope[];
  readonly mark: LogMark;
}

/**
 * readLedgerFrom reads only the entries after `mark` (readLogFrom's checks; `BadLedger` for a
 * malformed entry or a file given for the folder), so a writer resumes from its verified state.
 */
export function readLedgerFrom(path: string, mark: LogMark): LedgerTail {
  if (existsSync(path) && !isLog(path))
    throw new HostError(
      "BadLedger",
      `${path} is a file: a ledger is now an append-only folder (jcp §4.3); give a new path`,
    );
  if (!existsSync(path)) {
    if (mark.seq !== 0) throw new HostError("BadLedger", `${path}: the ledger is gone`);
    return { grants: [], receipts: [], mark };
  }
  const { entries, head } = readLogFrom(path, mark);
  const grants: Envelope[] = [];
  const receipts: Envelope[] = [];
  for (const e of entries) {
    const o = entryOf(path, e.seq, e.payload);
    grants.push(...o.grants);
    receipts.push(o.receipt);
  }
  return { grants, receipts, mark: { seq: mark.seq + entries.length, head } };
}

/** appendLedgerAt appends one receipt (and grants new to the ledger) after `mark`, in O(1); StaleHead if another writer took the position. */
export function appendLedgerAt(
  path: string,
  mark: LogMark,
  grants: readonly Envelope[],
  receipt: Envelope,
): LogMark {
  return appendLogAt(path, mark, canonicalBytes({ grants, receipt }));
}
