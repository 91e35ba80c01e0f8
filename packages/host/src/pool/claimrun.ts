// §15.4 Claiming into a run: the claim is appended to the pool's ledger first (compare-and-append
// on the ledger's head: one item, one claim), then the unit runs in the claimed item's parked
// sandbox as the run's first interval, through runUnit, metered, journaled and attested as a cold
// run is; its first receipt carries the claim's warmpool components (provisioning plus accrued
// residency), checked (checkClaimCharged) before anything is returned.
import { mkdirSync } from "node:fs";
import { addressOf, type Digest, type KeyPair } from "@sbx/wire";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { checkClaimCharged } from "@sbx/sandbox-attest/warmpool";
import { HostError } from "../errors.ts";
import { writeFilesAt } from "../fsat/index.ts";
import type { GrantDebit, GrantRun } from "../grants/index.ts";
import { runUnit, type RunUnitOptions, type RunUnitResult } from "../run/index.ts";
import { claimWatch, debitClaim } from "./claimgrant.ts";
import { poolPinnedImage } from "./environment.ts";
import type { PoolLedger } from "./ledger.ts";
import { claimSandbox, parkedSandboxOptions, readParked, type ParkedInfo } from "./parked.ts";
import { claimPoolItemOn, type Claimed } from "./pool.ts";

/** What claimAndRun needs: the command, the signing key, and how the unit runs. */
export interface ClaimAndRunOptions {
  readonly argv: readonly string[];
  readonly hostKey: KeyPair;
  /** The grant the unit runs under (checked with checkClaimGrant before this is called). */
  readonly grant?: GrantRun | null;
  /** The run's grants_id without a grant (default: the address of {}, none). */
  readonly grantsId?: Digest;
  /** The item to claim (default: the oldest resident one). */
  readonly item?: string;
  readonly timeoutMs?: number;
  /** Where stdout and stderr are written as they arrive, then the record's files with claim.json. */
  readonly outputDir?: string;
  readonly abort?: AbortSignal;
  readonly onOutput?: RunUnitOptions["onOutput"];
}

/** What a claim into a run did: the claim, the unit, its interval and its debit under a grant. */
export interface ClaimRunResult {
  readonly claimed: Claimed;
  readonly unit: unknown;
  readonly unitId: Digest;
  readonly result: RunUnitResult;
  readonly debit?: GrantDebit;
}

// A claimed item's parked sandbox as recorded, `PoolItemLost` when there is none.
function parkedInfo(itemDir: string): ParkedInfo {
  const info = readParked(itemDir);
  if (info === null) throw new HostError("PoolItemLost", `${itemDir} has no parked sandbox`);
  return info;
}

/**
 * claimAndRun claims an item of the pool at `dir` (its ledger `ledger`) for the unit of `o.argv` on
 * the pool's manifest and runs that unit in the item's parked sandbox (§15.4). Refuses the claim's
 * codes (PoolEmpty, DoubleClaim, UnknownItem, …), `PoolItemNotParked` for an item of a --no-sandbox
 * pool (claimed by then: such items are claimed with claimPoolItemOn alone), `PoolItemLost`, and
 * what runUnit refuses (SandboxMismatch when the item's sandbox is not what the pool's manifest pins).
 */
export async function claimAndRun(
  ledger: PoolLedger,
  dir: string,
  o: ClaimAndRunOptions,
): Promise<ClaimRunResult> {
  const state = await ledger.open();
  const manifest = state.descriptor.manifest;
  const grant = o.grant ?? null;
  const grantsId = grant?.grantsId ?? o.grantsId ?? addressOf({});
  const unit = makeUnit({ argv: o.argv, manifest, level: "S4" });
  const id = unitId(unit);
  const c = await claimPoolItemOn(ledger, dir, {
    unit: id,
    grants: grantsId,
    key: o.hostKey,
    ...(o.item !== undefined ? { item: o.item } : {}),
  });
  if (!c.parked)
    throw new HostError(
      "PoolItemNotParked",
      `${c.claim.item} is not a parked sandbox (a --no-sandbox pool): claim it with --unit`,
    );
  const watch = grant ? claimWatch(grant, BigInt(c.claim.accrued_uj)) : null;
  if (o.outputDir !== undefined) mkdirSync(o.outputDir, { recursive: true });
  const r = await runUnit({
    argv: o.argv,
    hostKey: o.hostKey,
    unitId: id,
    unit,
    grantsId,
    manifest,
    policy: addressOf({}),
    // The sandbox the item was built as (its image, env, user, folder), and what the pool's
    // manifest pins, compared before the interval is signed (SandboxMismatch).
    sandbox: parkedSandboxOptions(c.itemDir, parkedInfo(c.itemDir)),
    ...pinnedOf(poolPinnedImage(dir, manifest)),
    startSandbox: (a) => claimSandbox(c.itemDir, a),
    extraComponents: c.components,
    ...(watch ? { live: watch } : {}),
    ...(o.abort ? { abort: o.abort } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.outputDir !== undefined ? { outputDir: o.outputDir } : {}),
    ...(o.onOutput ? { onOutput: o.onOutput } : {}),
  });
  checkClaimCharged(c.state, c.claim, r.receipt.receipt);
  // One debit of the receipt's total, which includes the claim's warmpool components.
  const debit = grant && watch ? debitClaim(grant, watch, r) : undefined;
  if (o.outputDir !== undefined) writeClaimFiles(o.outputDir, r, unit, c);
  return { claimed: c, unit, unitId: id, result: r, ...(debit ? { debit } : {}) };
}

// runUnit's pinnedImage, where the pool keeps its manifest's environment.
function pinnedOf(pinned: string | null | undefined): { pinnedImage?: string | null } {
  return pinned === undefined ? {} : { pinnedImage: pinned };
}

// The record beside the output: unit.json, claim.json, attestation.json, receipt.json, journal.json,
// written as fsat writeFilesAt does (never through a link the unit planted).
function writeClaimFiles(dir: string, r: RunUnitResult, unit: unknown, c: Claimed): void {
  const json = (x: unknown) => Buffer.from(JSON.stringify(x, null, 2) + "\n", "utf8");
  writeFilesAt(dir, [
    { name: "unit.json", bytes: json(unit) },
    { name: "claim.json", bytes: json(c.claim) },
    { name: "attestation.json", bytes: json(r.attestation) },
    { name: "receipt.json", bytes: json(r.receipt.envelope) },
    { name: "journal.json", bytes: json({ head: r.journal.head(), events: r.journal.events }) },
  ]);
}
