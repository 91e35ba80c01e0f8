// The checkpoint log on disk (jcp §4.7), on the one append-only log (@sbx/host/log): a folder with
// one checkpoint or amendment envelope per entry, never rewritten. A writer (jcp checkpoint, jcp
// amend) reads the log, replays it (CheckpointLog.replay's codes), signs its entry on that state and
// appends it on exactly the head it read; when another writer appended first (StaleHead) it reads
// and replays again and signs again on the new state (an amendment must answer the latest
// checkpoint, a checkpoint must acknowledge every amendment), so no entry is ever lost or forked.
// A checkpoint log of an older jcp (a JSON list file) is still read, never written.
import { existsSync } from "node:fs";
import { parseStrict, type Digest, type Envelope } from "@sbx/wire";
import { CheckpointLog } from "@sbx/jcp-grant/checkpoint";
import { HostError, isHostError } from "../errors.ts";
import { isLog, LOG_GENESIS, readLog, readLogFrom, type LogMark, type LogState } from "../log/index.ts";
import { readJsonInput } from "../files.ts";
import { appendLogJson, readLogJson } from "./ledger.ts";

/** A checkpoint log as read: its entries and the log's head (null for an older list file). */
export interface CheckpointEntries {
  readonly entries: Envelope[];
  readonly head: Digest | null;
}

/**
 * readCheckpointLog reads a checkpoint log: an append-only folder, or the JSON list file of an
 * older jcp (read only); missing means empty. A malformed entry or file is unusable (exit 2).
 */
export function readCheckpointLog(path: string): CheckpointEntries {
  if (!existsSync(path) || isLog(path)) {
    const { values, head } = readLogJson(path);
    return { entries: values as Envelope[], head };
  }
  const v: unknown = readJsonInput(path, "checkpoint log");
  if (!Array.isArray(v))
    throw new HostError(
      "BadLedger",
      `${path} is not a checkpoint log (a folder, or a JSON list of envelopes)`,
    );
  return { entries: v as Envelope[], head: null };
}

/**
 * appendCheckpoint replays the log at `path` under `chain` and appends the entry `sign` makes on
 * that state (CheckpointLog.checkpoint or .amend, whose refusals it passes on), on the head it read;
 * on StaleHead it reads and signs again, at most `maxRetries` times. `BadLedger` for a list file of
 * an older jcp: a log is now a folder. Returns the log after the entry and the retries.
 */
export function appendCheckpoint(
  path: string,
  chain: readonly Envelope[],
  sign: (log: CheckpointLog) => Envelope,
  maxRetries = 1000,
): { log: CheckpointLog; retries: number } {
  for (let retries = 0; ; retries++) {
    const { entries, head } = readCheckpointLog(path);
    if (head === null)
      throw new HostError(
        "BadLedger",
        `${path} is a file: a checkpoint log is now an append-only folder (jcp §4.7); give a new path`,
      );
    const log = CheckpointLog.replay(chain, entries);
    const env = sign(log);
    try {
      appendLogJson(path, head, env);
    } catch (e) {
      if (isHostError(e, "StaleHead") && retries < maxRetries) continue;
      throw e;
    }
    return { log, retries };
  }
}

/**
 * A reader that follows a checkpoint log as it grows (sbx run --amendments, every metering period):
 * it replays the log once, then verifies only the entries appended since (CheckpointLog.append),
 * re-reading the last entry it saw to check it is still there unchanged. A log that no longer
 * continues what it read is replayed whole against the (length, head) it saw (jcp §4.7: a fork is
 * `BrokenCheckpointLog`), and that seen point outlives a refusal, so a fork is never followed.
 */
export class CheckpointFollower {
  readonly #path: string;
  readonly #chain: readonly Envelope[];
  #log: CheckpointLog | null = null;
  // The log's mark after the last entry read, and before it (where the next read starts).
  #mark: LogMark = { seq: 0, head: LOG_GENESIS };
  #prev: LogMark = { seq: 0, head: LOG_GENESIS };
  #seen: { length: number; head: Digest } | null = null;

  constructor(path: string, chain: readonly Envelope[]) {
    this.#path = path;
    this.#chain = chain;
  }

  /** The log as it is now (CheckpointLog's codes, BrokenCheckpointLog, LogBroken, BadLedger). */
  current(): CheckpointLog {
    try {
      const log = this.#follow();
      this.#seen = { length: log.length, head: log.head };
      return log;
    } catch (e) {
      this.#log = null;
      throw e;
    }
  }

  #parse(payload: Uint8Array): unknown {
    try {
      return parseStrict(payload, { maxBytes: 1 << 20, maxDepth: 64 });
    } catch (err) {
      throw new HostError("BadLedger", `${this.#path}: an entry is not JSON`, { cause: err });
    }
  }

  #follow(): CheckpointLog {
    if (this.#log !== null) {
      let tail: LogState | null;
      try {
        tail = readLogFrom(this.#path, this.#prev);
      } catch (e) {
        if (!isHostError(e, "LogBroken")) throw e;
        tail = null;
      }
      const again = this.#mark.seq - this.#prev.seq; // 1: the last entry read is read again
      if (tail !== null && (again === 0 || tail.entries[0]?.head === this.#mark.head)) {
        const fresh = tail.entries.slice(again);
        for (const e of fresh) this.#log.append(this.#parse(e.payload));
        if (fresh.length > 0) {
          const last = fresh[fresh.length - 1]!;
          this.#prev = { seq: last.seq - 1, head: last.prev };
          this.#mark = { seq: last.seq, head: last.head };
        }
        return this.#log;
      }
    }
    // Whole: a list file of an older jcp is replayed each time and never cached.
    if (existsSync(this.#path) && !isLog(this.#path))
      return this.#replay(readCheckpointLog(this.#path).entries);
    const { entries } = readLog(this.#path);
    const log = this.#replay(entries.map((e) => this.#parse(e.payload)));
    const last = entries[entries.length - 1];
    this.#prev = last ? { seq: last.seq - 1, head: last.prev } : { seq: 0, head: LOG_GENESIS };
    this.#mark = last ? { seq: last.seq, head: last.head } : { seq: 0, head: LOG_GENESIS };
    this.#log = log;
    return log;
  }

  #replay(entries: readonly unknown[]): CheckpointLog {
    return CheckpointLog.replay(this.#chain, entries, this.#seen ? { prefix: this.#seen } : {});
  }
}
