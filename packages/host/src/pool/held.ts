// §15.7 on a warm path: the verified state of a pool ledger, held by this process between
// operations, so a claim verifies only the entries it has not verified yet.
//
// What is held per pool directory: the exact bytes of pool.json and of the ledger as last verified,
// and the state their replay gave. An open reads both files again (under the pool lock when the
// caller holds it) and uses the held state only when pool.json is byte-for-byte the same and the
// ledger still begins with every byte verified before; the entries after that prefix (appended by
// this or another process) are then verified one by one onto a copy (extendLedger), exactly as a
// full replay checks them. Anything else (a changed descriptor, a prefix that differs in any byte, a
// shorter ledger, another host set asked for) is a full replay from genesis. A replay is a
// deterministic function of those bytes, so the held state is the state a full replay would give:
// nothing of §15.7 is skipped, only repeated. A tail that fails verification is refused with its
// code and leaves the held state as it was.
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { copyLedgerState, extendLedger, replayLedger, type LedgerState } from "@sbx/sandbox-attest/warmpool";
import { HostError } from "../errors.ts";
import { parseLedgerLines, poolPaths, readLedgerBytes } from "./files.ts";

interface Held {
  readonly descriptor: Buffer;
  readonly ledger: Buffer;
  readonly state: LedgerState;
}

/** How many pool directories one process holds verified states for (least recently opened dropped). */
const HELD_MAX = 8;

const held = new Map<string, Held>();

/** What the last openHeldPool did: how many entries it verified, and whether it began at genesis. */
export interface HeldOpenStats {
  readonly verified: number;
  readonly fromGenesis: boolean;
}

let last: HeldOpenStats = { verified: 0, fromGenesis: true };

/** lastHeldOpen reports what the last open verified (for tests and the bench). */
export function lastHeldOpen(): HeldOpenStats {
  return last;
}

/** forgetHeldPools drops every held state (the next open of each pool replays from genesis). */
export function forgetHeldPools(): void {
  held.clear();
}

/**
 * openHeldPool reads and verifies a pool directory's ledger (§15.7), verifying only what follows
 * the prefix this process verified before; `PoolMissing` when there is no pool.json. With `hosts`
 * every open is a full replay (the held states are for the host's own pools).
 */
export function openHeldPool(dir: string, hosts?: readonly string[]): LedgerState {
  const p = poolPaths(dir);
  if (!existsSync(p.descriptor)) throw new HostError("PoolMissing", `${dir} holds no pool.json`);
  const descriptor = readFileSync(p.descriptor);
  const ledger = readLedgerBytes(p.ledger);
  if (hosts !== undefined) {
    last = { verified: -1, fromGenesis: true };
    return replayLedger(
      {
        pool: JSON.parse(descriptor.toString("utf8")) as unknown,
        entries: parseLedgerLines(p.ledger, ledger),
      },
      { hosts },
    );
  }
  const key = resolve(dir);
  const h = held.get(key);
  let state: LedgerState;
  if (
    h !== undefined &&
    h.descriptor.equals(descriptor) &&
    ledger.length >= h.ledger.length &&
    ledger.subarray(0, h.ledger.length).equals(h.ledger)
  ) {
    const tail = parseLedgerLines(p.ledger, ledger.subarray(h.ledger.length), h.state.entries.length + 1);
    last = { verified: tail.length, fromGenesis: false };
    state = extendLedger(h.state, tail);
  } else {
    const entries = parseLedgerLines(p.ledger, ledger);
    last = { verified: entries.length, fromGenesis: true };
    state = replayLedger({ pool: JSON.parse(descriptor.toString("utf8")) as unknown, entries });
  }
  held.delete(key);
  if (held.size >= HELD_MAX) {
    const oldest = held.keys().next();
    if (oldest.done !== true) held.delete(oldest.value);
  }
  held.set(key, { descriptor, ledger, state: copyLedgerState(state) });
  return state;
}
