// The spend ledger on disk (jcp §4.3): an append-only log (@sbx/host/log) whose entries are each one
// receipt plus the grant envelopes it cites that no earlier entry carried. Never rewritten: a spend
// claims the head it was built against, and a writer that lost the race rebuilds from the new head.
import { existsSync } from "node:fs";
import { canonicalBytes, parseStrict, type Envelope, type Digest } from "@sbx/wire";
import { appendLog, isLog, readLog } from "@sbx/host/log";
import { CliError } from "../../../errors.ts";

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
    throw new CliError(
      "BadLedger",
      `${path} is a file: a ledger is now an append-only folder (jcp §4.3); give a new path`,
    );
  const { entries, head } = readLog(path);
  const grants: Envelope[] = [];
  const receipts: Envelope[] = [];
  for (const e of entries) {
    let v: unknown;
    try {
      v = parseStrict(e.payload, { maxBytes: MAX_ENTRY_BYTES, maxDepth: 64 });
    } catch (err) {
      throw new CliError("BadLedger", `${path}: entry ${e.seq} is not JSON`, { cause: err });
    }
    const o = v as { grants?: unknown; receipt?: unknown } | null;
    if (
      !o ||
      typeof o !== "object" ||
      !Array.isArray(o.grants) ||
      !o.receipt ||
      typeof o.receipt !== "object"
    )
      throw new CliError("BadLedger", `${path}: entry ${e.seq} is not {grants, receipt}`);
    grants.push(...(o.grants as Envelope[]));
    receipts.push(o.receipt as Envelope);
  }
  return { grants, receipts, head };
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
      throw new CliError("BadLedger", `${path}: entry ${e.seq} is not JSON`, { cause: err });
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
