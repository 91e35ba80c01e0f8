// The interface over the append-only log of chained ledgers (spend, revocation, mint, checkpoint,
// pool; jcp §4.3), so one ledger's code runs on a folder (appendlog.ts) or on PostgreSQL
// (../pg/pglog.ts) with the same semantics: entries `<prev head>\n<payload>`, the head after an entry
// the BLAKE3 of those bytes, compare-and-append on the head (`StaleHead`), readers that check every
// link (`LogBroken`). A store holds many logs, each named by the caller ("spend/<grant address>").
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { HostError, isHostError } from "../errors.ts";
import { appendLog, readLog, type LogState } from "./appendlog.ts";

/** What `update` asks of its builder: the payload to append on this state, or null to append nothing. */
export type LogBuilder<T> = (state: LogState) => { payload: Uint8Array; result: T } | null;

/** Many named logs in one store. */
export interface LogStore {
  /** Reads log `name` with every link checked (`LogBroken`); a log never written is empty. */
  readLog(name: string): Promise<LogState>;
  /** Appends after `expected`; `StaleHead` when the head moved. Returns the new head. */
  appendLog(name: string, expected: Digest, payload: Uint8Array): Promise<Digest>;
  /**
   * Reads the log, lets `build` decide what to append on that state (a spend checks its budget
   * there), and appends it on exactly the head it was built from: the check and the append are one
   * step, so a budget is never passed by racing writers. Returns the builder's result, or null when
   * it appended nothing.
   */
  update<T>(name: string, build: LogBuilder<T>): Promise<T | null>;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}(\/[A-Za-z0-9][A-Za-z0-9._:-]{0,127}){0,3}$/;

/** checkLogName refuses a name that is not 1–4 segments of [A-Za-z0-9._:-] (a RangeError: caller misuse). */
export function checkLogName(name: string): string {
  if (!NAME.test(name)) throw new RangeError(`log name ${JSON.stringify(name)} is not a-z0-9._:- segments`);
  return name;
}

/** How many times a file-backed update rebuilds after losing the head before it gives up. */
const MAX_REBUILDS = 100_000;

/** Logs as folders under one root (`<root>/<name>`), by appendlog.ts. */
export class FileLogStore implements LogStore {
  readonly root: string;
  constructor(root: string) {
    this.root = root;
  }
  #dir(name: string): string {
    return join(this.root, ...checkLogName(name).split("/"));
  }
  readLog(name: string): Promise<LogState> {
    return Promise.resolve().then(() => readLog(this.#dir(name)));
  }
  appendLog(name: string, expected: Digest, payload: Uint8Array): Promise<Digest> {
    return Promise.resolve().then(() => appendLog(this.#dir(name), expected, payload));
  }
  async update<T>(name: string, build: LogBuilder<T>): Promise<T | null> {
    const dir = this.#dir(name);
    for (let i = 0; ; i++) {
      const state = readLog(dir);
      const next = build(state);
      if (next === null) return null;
      try {
        appendLog(dir, state.head, next.payload);
        return next.result;
      } catch (e) {
        if (!isHostError(e, "StaleHead") || i >= MAX_REBUILDS) throw e;
      }
      await Promise.resolve();
    }
  }
}

/** logEntryBytes is what an entry's head is the digest of: `<prev head>\n<payload>`. */
export function logEntryBytes(prev: Digest, payload: Uint8Array): Uint8Array {
  const prefix = new TextEncoder().encode(`${prev}\n`);
  const out = new Uint8Array(prefix.length + payload.length);
  out.set(prefix, 0);
  out.set(payload, prefix.length);
  return out;
}

/** staleHead is the refusal of an append whose expected head moved. */
export function staleHead(name: string, head: Digest, expected: Digest): HostError {
  return new HostError("StaleHead", `log ${name}: head is ${head}, expected ${expected}`);
}
