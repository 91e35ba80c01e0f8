// The grant in force while a unit runs (jcp §4.7): the chain's leaf with its issuer's amendments
// applied, read from the leaf's checkpoint log (jcp amend --log, an append-only folder) at every
// metering period of `sbx run --grant --amendments LOG`. The log is replayed once and then only the
// entries appended since are verified (CheckpointFollower); one that no longer continues what was
// read is replayed whole, so a rewritten log is refused, never followed.
import type { EffectiveGrant } from "@sbx/jcp-grant/grant";
import type { Envelope } from "@sbx/wire";
import { CheckpointFollower } from "./checkpointlog.ts";

let last: { path: string; chain: readonly Envelope[]; follower: CheckpointFollower } | null = null;

/**
 * amendedLeaf returns the leaf of `chain` as its checkpoint log at `path` leaves it now (the leaf
 * itself when the log is missing). Throws what CheckpointLog.replay throws, and on a log that is
 * not one: a caller enforcing a budget treats any throw as nothing left (fail closed).
 */
export function amendedLeaf(chain: readonly Envelope[], path: string): EffectiveGrant {
  if (last === null || last.path !== path || last.chain !== chain)
    last = { path, chain, follower: new CheckpointFollower(path, chain) };
  return last.follower.current().effective;
}
