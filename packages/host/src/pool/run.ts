// §15.4 Claiming into a run: the unit's first active interval runs in the claimed item's
// workspace, metered, and the run's first energy receipt (§6.1, seq 0) carries the claim's
// `warmpool` components next to the interval's own, so the fast start's joules are on the record.
import { type Envelope, type KeyPair } from "@sbx/wire";
import {
  makeReceipt,
  startEnergyChain,
  type EnergyReceipt,
  type MadeReceipt,
} from "@sbx/sandbox-attest/energy";
import { checkClaimCharged } from "@sbx/sandbox-attest/warmpool";
import { meterCommand } from "../meter/index.ts";
import type { Claimed } from "./pool.ts";

/** The first interval of a run started from a pool claim. */
export interface ClaimedRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly receipt: EnergyReceipt;
  readonly envelope: Envelope;
  readonly made: MadeReceipt;
  readonly stdout: string;
}

/**
 * runClaimed runs `argv` in the claimed workspace as the claiming run's first interval and signs
 * its first energy receipt with the claim's warmpool components (§15.4), checked with
 * checkClaimCharged before it is returned.
 */
export async function runClaimed(c: Claimed, argv: readonly string[], key: KeyPair): Promise<ClaimedRun> {
  const m = meterCommand(argv, { spawn: { cwd: c.workspace, stdio: ["ignore", "pipe", "inherit"] } });
  const out: Buffer[] = [];
  m.child.stdout?.on("data", (d: Buffer) => out.push(d));
  const exit = await m.done;
  const made = makeReceipt(startEnergyChain(c.claim.unit, c.claim.grants), exit.reading, key, c.components);
  checkClaimCharged(c.state, c.claim, made.receipt);
  return {
    code: exit.code,
    signal: exit.signal,
    receipt: made.receipt,
    envelope: made.envelope,
    made,
    stdout: Buffer.concat(out).toString("utf8"),
  };
}
