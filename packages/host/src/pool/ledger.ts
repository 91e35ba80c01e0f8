// §15.7.1 The seam between the pool's operations and where its ledger is kept: the pool's log folder
// (poollog.ts, synchronous, with its warm opens) or a log in a LogStore (../log/logstore.ts: the
// PostgreSQL store's PgLogStore, asynchronous). Both keep the same entries (one per pool operation,
// each its §15.2 envelopes as JSON lines: encodeEntry), the same compare-and-append on the head the
// operation verified with `StaleHead` answered by reading again and deciding again, and the same
// §15.7 verification of every envelope on every open. With a LogStore the log's links are checked by
// the store (PgLogStore: every head recomputed, a row altered in the database refused `LogBroken`),
// and every envelope by §15.7: from genesis on a process's first open of the pool (and whenever
// trusted hosts are given), afterwards only the entries after the state it holds (HeldPool).
//
// The log's name binds it to its pool: `pool/<pool_id>`, pool_id being the address of the signed
// descriptor in pool.json (§15.1), so a ledger cannot be swapped between pools (and §15.2's chain
// starts from that pool_id besides).
import { existsSync, mkdirSync } from "node:fs";
import { envelopeAddress, type Digest, type Envelope } from "@sbx/wire";
import { copyLedgerState, extendLedger, replayLedger, type LedgerState } from "@sbx/sandbox-attest/warmpool";
import { HostError, isHostError } from "../errors.ts";
import type { LogStore } from "../log/logstore.ts";
import {
  commitPoolOp,
  decodeEntryOf,
  descriptorBytes,
  encodeEntry,
  MAX_REDECIDE,
  oldLedgerFile,
  openPoolLog,
  poolLogDir,
} from "./poollog.ts";
import { ledgerAtPath } from "./ledgerat.ts";
import { writeFileDurably } from "./files.ts";

/** What one pool operation decides on a verified state: the envelopes it signed into it, and its result. */
export type PoolDecision<T> = (
  s: LedgerState,
  /** A cheap look (no guard: the append decides) at whether the head `s` was read at is still the head. */
  stillHead?: () => boolean,
) => { envs: Envelope[]; result: T };

/** A pool's ledger, wherever it is kept. */
export interface PoolLedger {
  /** Where the ledger is, for messages and `sbx pool verify --json` (a folder, or `log NAME`). */
  readonly where: string;
  /** Marks a pool being created as keeping its ledger here (before pool.json is written). */
  bind(): void;
  /** Reads and verifies the ledger (§15.7); `hosts`: the trusted hosts that may sign it. */
  open(hosts?: readonly string[]): Promise<LedgerState>;
  /**
   * Runs one operation as a compare-and-append (commitPoolOp's contract): decided on the state read,
   * appended on exactly its head, decided again on `StaleHead` until `deadline` (ms since the epoch).
   */
  commit<T>(
    decide: PoolDecision<T>,
    deadline?: number,
  ): Promise<{ result: T; state: LedgerState; retries: number }>;
}

/** folderLedger is the pool's own log folder `<dir>/ledger/` (poollog.ts), as it has always been. */
export function folderLedger(dir: string): PoolLedger {
  return {
    where: poolLogDir(dir),
    bind: () => undefined,
    open: (hosts) => Promise.resolve().then(() => openPoolLog(dir, hosts).state),
    commit: (decide, deadline) => Promise.resolve().then(() => commitPoolOp(dir, decide, deadline)),
  };
}

/** poolLogName is the name of the pool's ledger in a LogStore: `pool/<pool_id>` (the descriptor's address). */
export function poolLogName(descriptor: Buffer): string {
  let env: unknown;
  try {
    env = JSON.parse(descriptor.toString("utf8"));
  } catch (e) {
    throw new HostError("PoolLedgerFormat", "pool.json is not JSON", { cause: e });
  }
  let id: Digest;
  try {
    id = envelopeAddress(env as Envelope);
  } catch (e) {
    throw new HostError("PoolLedgerFormat", "pool.json is not a signed descriptor", { cause: e });
  }
  return `pool/${id}`;
}

// A pool folder that keeps its ledger in a folder (today's log, or the older one-file form) is not
// read from a LogStore: the store's log of that name would be empty, or another ledger.
function refuseFolderLedger(dir: string): void {
  if (existsSync(poolLogDir(dir)) || existsSync(oldLedgerFile(dir)))
    throw new HostError(
      "PoolLedgerElsewhere",
      `${dir}: this pool's ledger is the folder ${poolLogDir(dir)}, not a log in the selected store; ` +
        `select the file store (--store DIR) or leave --store out`,
    );
}

/**
 * A pool state this process verified from a LogStore's log: the descriptor's bytes, how many log
 * entries it covers and the head after the last of them. The log's heads chain every payload
 * (BLAKE3 of `<prev head>\n<payload>`, recomputed by the store's reader), so a log read later whose
 * entry at that position has that head holds exactly those entries first: only the entries after
 * them are verified by §15.7, on a copy of the state (the folder's warm open, without its every-16th
 * full read, which that head check makes needless).
 */
interface HeldPool {
  readonly descriptor: Buffer;
  readonly count: number;
  readonly head: Digest;
  readonly state: LedgerState;
}

const HELD_POOLS = 8;
const heldPools = new WeakMap<LogStore, Map<string, HeldPool>>();

/**
 * logStoreLedger keeps the ledger of the pool in folder `dir` as log `pool/<pool_id>` of `logs`
 * (PostgreSQL: PgLogStore). Refuses `PoolMissing` without pool.json, `PoolLedgerElsewhere` for a
 * pool whose ledger is a folder, `PoolLedgerFormat` for an entry that is not envelope lines,
 * `LogBroken` (the store's check of every link), `StaleHead` after MAX_REDECIDE lost heads or the
 * deadline, and every §15.7 code.
 */
export function logStoreLedger(dir: string, logs: LogStore): PoolLedger {
  const read = async (hosts?: readonly string[]) => {
    const descriptor = descriptorBytes(dir);
    refuseFolderLedger(dir);
    const name = poolLogName(descriptor);
    const log = await logs.readLog(name);
    const decode = (from: number) => log.entries.slice(from).flatMap((e) => decodeEntryOf(`log ${name}`, e));
    const pool = JSON.parse(descriptor.toString("utf8")) as unknown;
    if (hosts !== undefined)
      return { name, state: replayLedger({ pool, entries: decode(0) }, { hosts }), head: log.head };
    const held = heldPools.get(logs) ?? new Map<string, HeldPool>();
    heldPools.set(logs, held);
    const h = held.get(name);
    const warm =
      h !== undefined &&
      h.descriptor.equals(descriptor) &&
      (h.count === 0 || log.entries[h.count - 1]?.head === h.head);
    const state = warm ? extendLedger(h.state, decode(h.count)) : replayLedger({ pool, entries: decode(0) });
    held.delete(name);
    if (held.size >= HELD_POOLS) {
      const oldest = held.keys().next();
      if (oldest.done !== true) held.delete(oldest.value);
    }
    held.set(name, { descriptor, count: log.entries.length, head: log.head, state: copyLedgerState(state) });
    return { name, state, head: log.head };
  };
  return {
    get where() {
      try {
        return `log ${poolLogName(descriptorBytes(dir))}`;
      } catch {
        return `log pool/<pool_id> of the selected store (${dir})`;
      }
    },
    bind() {
      refuseFolderLedger(dir);
      mkdirSync(dir, { recursive: true });
      writeFileDurably(ledgerAtPath(dir), JSON.stringify({ store: "log-store" }) + "\n");
    },
    open: async (hosts) => (await read(hosts)).state,
    async commit(decide, deadline = Number.POSITIVE_INFINITY) {
      for (let retries = 0; ; retries++) {
        const { name, state, head } = await read();
        const d = decide(state);
        try {
          await logs.appendLog(name, head, encodeEntry(d.envs));
          return { result: d.result, state, retries };
        } catch (e) {
          if (!isHostError(e, "StaleHead") || retries >= MAX_REDECIDE || Date.now() > deadline) throw e;
        }
      }
    },
  };
}
