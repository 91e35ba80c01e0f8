// §15.2 on the host's one append-only log (jcp §4.3, ../log/appendlog.ts): a pool's ledger is the log
// folder `<dir>/ledger/`. Each log entry's payload is what one pool operation commits: one or more
// §15.2 envelopes, each one line of JSON ending in a newline (a claim's residency and its claim are
// one entry, so they commit together or not at all). Appends are compare-and-append on the log
// position and head the writer verified (appendLogAt): a writer that lost the head gets `StaleHead`,
// reads the new entries, decides again and retries.
//
// Reading (§15.7): every log link is checked (`LogBroken`), then every envelope by the §15.7 steps.
// A process keeps, per pool folder, the bytes of pool.json, the log mark (position and head) it
// verified up to and the state that gave; its next open re-reads pool.json, checks that the entry at
// the mark still hashes to the mark's head, and then verifies only the entries after the mark
// (readLogFrom + extendLedger). Anything else (another pool.json, a changed last entry, trusted
// hosts given) is a verification from genesis, and so is every FULL_EVERY-th open of a pool: an older
// entry rewritten in place is refused at the latest on the FULL_EVERY-th open after the change, at
// once by a fresh process (every `sbx pool` command).
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { digestBytes, type Envelope } from "@sbx/wire";
import { copyLedgerState, extendLedger, replayLedger, type LedgerState } from "@sbx/sandbox-attest/warmpool";
import { HostError, isHostError } from "../errors.ts";
import {
  appendLogAt,
  LOG_START,
  readLog,
  readLogFrom,
  type LogEntry,
  type LogMark,
} from "../log/appendlog.ts";
import { refuseLedgerElsewhere } from "./ledgerat.ts";

/** The pool's log folder, beside pool.json. */
export function poolLogDir(dir: string): string {
  return join(dir, "ledger");
}

/** The one-file ledger (`ledger.jsonl`, one envelope per line) of versions before the log. */
export function oldLedgerFile(dir: string): string {
  return join(dir, "ledger.jsonl");
}

/** How many envelopes one log entry may carry (an operation commits at most two). */
export const ENVELOPES_PER_ENTRY = 16;

/** Every FULL_EVERY-th open of a pool by one process verifies its log from genesis. */
export const FULL_EVERY = 16;

/** A pool ledger as read: its verified state and the log mark it was verified up to. */
export interface PoolLog {
  readonly state: LedgerState;
  readonly mark: LogMark;
}

/** encodeEntry is the payload of one log entry: each envelope as one JSON line. */
export function encodeEntry(envs: readonly Envelope[]): Uint8Array {
  return new TextEncoder().encode(envs.map((e) => JSON.stringify(e) + "\n").join(""));
}

// The envelopes of one log entry: 1 to ENVELOPES_PER_ENTRY lines of JSON, each ended by a newline.
function decodeEntry(dir: string, e: LogEntry): unknown[] {
  return decodeEntryOf(poolLogDir(dir), e);
}

/** decodeEntryOf reads one log entry of the ledger at `where` as its envelopes (`PoolLedgerFormat`). */
export function decodeEntryOf(where: string, e: LogEntry): unknown[] {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(e.payload);
  const lines = text.split("\n");
  const last = lines.pop();
  if (last !== "" || lines.length === 0 || lines.length > ENVELOPES_PER_ENTRY)
    throw new HostError(
      "PoolLedgerFormat",
      `${where}: entry ${String(e.seq)} is not 1–${String(ENVELOPES_PER_ENTRY)} lines of JSON`,
    );
  return lines.map((l, i) => {
    try {
      return JSON.parse(l) as unknown;
    } catch (err) {
      throw new HostError(
        "PoolLedgerFormat",
        `${where}: entry ${String(e.seq)} line ${String(i + 1)} is not JSON`,
        { cause: err },
      );
    }
  });
}

// Refuses a pool folder of the older one-file form: it is not converted (fail closed). Refuses too
// a pool whose ledger is a log in another store (ledger.ts: a PostgreSQL store's marker).
function refuseOldForm(dir: string): void {
  refuseLedgerElsewhere(dir);
  if (existsSync(oldLedgerFile(dir)))
    throw new HostError(
      "PoolLedgerFormat",
      `${dir} holds a one-file ledger (ledger.jsonl) of an older version; this host keeps pool ledgers ` +
        `as a log folder (${poolLogDir(dir)}) and does not convert it: verify it with the version that ` +
        `wrote it, destroy the pool there, and create it again`,
    );
}

/** descriptorBytes reads the pool's signed descriptor (`PoolMissing` without one). */
export function descriptorBytes(dir: string): Buffer {
  const p = join(dir, "pool.json");
  if (!existsSync(p)) throw new HostError("PoolMissing", `${dir} holds no pool.json`);
  return readFileSync(p);
}

// The head after the log entry at `seq` (LOG_START's at 0), or null when there is no such entry.
function headAt(dir: string, seq: number): string | null {
  if (seq === 0) return LOG_START.head;
  const p = join(poolLogDir(dir), String(seq).padStart(12, "0"));
  return existsSync(p) ? digestBytes(readFileSync(p)) : null;
}

interface Held {
  readonly descriptor: Buffer;
  readonly mark: LogMark;
  readonly state: LedgerState;
  /** Warm opens since the last verification from genesis. */
  readonly warm: number;
}

/** How many pool folders one process holds verified states for (least recently opened dropped). */
const HELD_MAX = 8;
const held = new Map<string, Held>();

/** What the last open did: how many envelopes it verified, and whether it began at genesis. */
export interface HeldOpenStats {
  readonly verified: number;
  readonly fromGenesis: boolean;
}

let last: HeldOpenStats = { verified: 0, fromGenesis: true };

/** lastHeldOpen reports what the last open verified (for tests and the bench). */
export function lastHeldOpen(): HeldOpenStats {
  return last;
}

/** forgetHeldPools drops every held state (the next open of each pool verifies from genesis). */
export function forgetHeldPools(): void {
  held.clear();
}

function fullRead(dir: string, descriptor: Buffer, hosts?: readonly string[]): PoolLog {
  const log = readLog(poolLogDir(dir));
  const entries = log.entries.flatMap((e) => decodeEntry(dir, e));
  last = { verified: entries.length, fromGenesis: true };
  const state = replayLedger(
    { pool: JSON.parse(descriptor.toString("utf8")) as unknown, entries },
    hosts === undefined ? {} : { hosts },
  );
  return { state, mark: { seq: log.entries.length, head: log.head } };
}

/**
 * openPoolLog reads and verifies a pool's ledger (§15.7) from its log, verifying only the entries
 * after the mark this process verified before (see the head of this file for when it starts from
 * genesis instead). `PoolMissing` without pool.json; `PoolLedgerFormat` for a pool of the older
 * one-file form or an entry that is not lines of JSON; `LogBroken` for a broken link; every §15.7
 * code. With `hosts`, always from genesis (held states are for the host's own pools). The state
 * returned is the caller's to change.
 */
export function openPoolLog(dir: string, hosts?: readonly string[]): PoolLog {
  const descriptor = descriptorBytes(dir);
  refuseOldForm(dir);
  if (hosts !== undefined) {
    const r = fullRead(dir, descriptor, hosts);
    last = { verified: -1, fromGenesis: true };
    return r;
  }
  const key = resolve(dir);
  const h = held.get(key);
  let r: PoolLog;
  let warm = 0;
  if (
    h !== undefined &&
    h.warm + 1 < FULL_EVERY &&
    h.descriptor.equals(descriptor) &&
    headAt(dir, h.mark.seq) === h.mark.head
  ) {
    const more = readLogFrom(poolLogDir(dir), h.mark);
    const envs = more.entries.flatMap((e) => decodeEntry(dir, e));
    last = { verified: envs.length, fromGenesis: false };
    r = {
      state: extendLedger(h.state, envs),
      mark: { seq: h.mark.seq + more.entries.length, head: more.head },
    };
    warm = h.warm + 1;
  } else r = fullRead(dir, descriptor);
  held.delete(key);
  if (held.size >= HELD_MAX) {
    const oldest = held.keys().next();
    if (oldest.done !== true) held.delete(oldest.value);
  }
  held.set(key, { descriptor, mark: r.mark, state: copyLedgerState(r.state), warm });
  return r;
}

/**
 * appendPoolEntry appends one log entry holding `envs` right after `mark` (compare-and-append:
 * `StaleHead` when another writer took that position first, `LogBroken` when the entry at the mark
 * no longer hashes to its head). Returns the mark after it once it and the log folder are fsynced.
 * A failure of the file system (ENOSPC, EIO, EROFS…) is `PoolWriteFailed`: the operation is not
 * reported done, and the next read shows whether the entry was claimed before the failure.
 */
export function appendPoolEntry(dir: string, mark: LogMark, envs: readonly Envelope[]): LogMark {
  refuseOldForm(dir);
  try {
    return appendLogAt(poolLogDir(dir), mark, encodeEntry(envs));
  } catch (e) {
    if (isHostError(e)) throw e;
    throw new HostError(
      "PoolWriteFailed",
      `${poolLogDir(dir)}: append failed (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
      { cause: e },
    );
  }
}

/** How many times an operation decides again after losing the head before it gives up. */
export const MAX_REDECIDE = 10_000;

/**
 * commitPoolOp runs one pool operation as a compare-and-append: it opens the ledger, lets `decide`
 * build the envelopes on that state (`decide` signs them into the state it is given, and may throw
 * any refusal: PoolEmpty, DoubleClaim…), and appends them on exactly the head they were built on.
 * On `StaleHead` it opens again, and `decide` decides again on the new state, until `deadline`
 * (ms since the epoch) or MAX_REDECIDE tries. Returns the decision, the state after it and the number
 * of heads lost. `decide` may call `stillHead` (one stat: is the log's next position still free?)
 * before it signs, and throw `StaleHead` when it is not, to spare signatures a lost head would
 * waste; only the append decides the race.
 */
export function commitPoolOp<T>(
  dir: string,
  decide: (s: LedgerState, stillHead: () => boolean) => { envs: Envelope[]; result: T },
  deadline = Number.POSITIVE_INFINITY,
): { result: T; state: LedgerState; retries: number } {
  for (let retries = 0; ; retries++) {
    const { state, mark } = openPoolLog(dir);
    const next = join(poolLogDir(dir), String(mark.seq + 1).padStart(12, "0"));
    try {
      const d = decide(state, () => !existsSync(next));
      appendPoolEntry(dir, mark, d.envs);
      return { result: d.result, state, retries };
    } catch (e) {
      if (!isHostError(e, "StaleHead") || retries >= MAX_REDECIDE || Date.now() > deadline) throw e;
    }
  }
}
