// The grant in force while a unit runs (jcp §4.7): the chain's leaf with its issuer's amendments
// applied, read from the leaf's checkpoint log (jcp amend --log) at every metering period of
// `sbx run --grant --amendments LOG`. The log is verified whole (CheckpointLog.replay's codes); a
// log unchanged since the last read is not verified again.
import { readFileSync, existsSync } from "node:fs";
import { CheckpointLog } from "@sbx/jcp-grant/checkpoint";
import type { EffectiveGrant } from "@sbx/jcp-grant/grant";
import { digestBytes, parseStrict, type Digest, type Envelope } from "@sbx/wire";

let last: { path: string; digest: Digest; leaf: EffectiveGrant } | null = null;

/**
 * amendedLeaf returns the leaf of `chain` as its checkpoint log at `path` leaves it now (the leaf
 * itself when the log is missing). Throws what CheckpointLog.replay throws, and on a log that is
 * not a JSON list: a caller enforcing a budget treats any throw as nothing left (fail closed).
 */
export function amendedLeaf(chain: readonly Envelope[], path: string): EffectiveGrant {
  const bytes = existsSync(path) ? readFileSync(path) : new TextEncoder().encode("[]");
  const digest = digestBytes(bytes);
  if (last !== null && last.path === path && last.digest === digest) return last.leaf;
  const entries = parseStrict(bytes, { maxBytes: 16 << 20, maxDepth: 64 });
  if (!Array.isArray(entries)) throw new TypeError(`${path} is not a checkpoint log`);
  const leaf = CheckpointLog.replay(chain, entries).effective;
  last = { path, digest, leaf };
  return leaf;
}
