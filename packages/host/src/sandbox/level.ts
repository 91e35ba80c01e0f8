// §9 The level a host states, computed from what it set up for the interval, never taken from a
// caller: each level from S1 up includes the ones below, so the level is the highest one whose
// guarantee and every guarantee beneath it were provided. A caller can only lower it.
import { LEVELS, type Level } from "@sbx/sandbox-attest/unit";

/** What the host provided for one interval (§9). */
export interface LevelFacts {
  /** S1: the unit ran in a sandbox per §5.1–§5.4 (startSandbox), with no network. */
  readonly isolated: boolean;
  /** S2: an energy receipt (§6) covers the interval. */
  readonly metered: boolean;
  /** S3: the interval is attested (§7). */
  readonly attested: boolean;
  /** S4: a replay journal (§8) is bound into the attestation. */
  readonly journaled: boolean;
  /** S5: the interval continues a durable run record (§13), which suspends and resumes with snapshots. */
  readonly snapshots: boolean;
  /** S6: the exec gate (§5.5) enforced the policy on the sandbox's mounts. */
  readonly processControl: boolean;
  /** S7: the attestation is linked into the steward's audit chain (§7.7). */
  readonly auditChain: boolean;
}

const LADDER: readonly (keyof LevelFacts)[] = [
  "isolated",
  "metered",
  "attested",
  "journaled",
  "snapshots",
  "processControl",
  "auditChain",
];

/** providedLevel (§9) returns the highest level all of whose guarantees `f` provides (S0 without S1). */
export function providedLevel(f: LevelFacts): Level {
  let n = 0;
  while (n < LADDER.length && f[LADDER[n] as keyof LevelFacts]) n++;
  return LEVELS[n] ?? "S0";
}

/**
 * statedLevel (§9) returns the level to state: the provided one, or `cap` when the caller asks for
 * less. A cap above what was provided changes nothing: a level is never raised.
 */
export function statedLevel(provided: Level, cap?: Level): Level {
  if (cap === undefined) return provided;
  return LEVELS.indexOf(cap) < LEVELS.indexOf(provided) ? cap : provided;
}
