// §13.4, §14.7 Does this host satisfy a run's manifest? The manifest is found by its address in the
// store (its environment's canonical bytes, stored when the run was created), re-addressed, and
// compared with what this host offers: its CPUs, memory and the store's free space (a GPU is never
// offered by the reference host). The S1 sandbox provides the manifest's env, user and workspace
// folder as declared, so those are offered as the manifest states them (offerFor). Fail closed: a
// manifest the store lacks, or whose bytes do not parse or do not hash to the address, is not
// satisfied. SBX_OFFER_CPUS and SBX_OFFER_MEMORY_BYTES can lower (never raise) what is offered, for a
// host that reserves part of itself.
import { availableParallelism, totalmem } from "node:os";
import { statfsSync } from "node:fs";
import { addressOf, canonicalBytes, parseCanonical, type Digest } from "@sbx/wire";
import {
  MANIFEST_TYPE,
  offerFor,
  satisfies,
  type HostOffer,
  type Manifest,
  type ManifestEnvironment,
  type Satisfaction,
} from "@sbx/sandbox-attest/manifest";
import type { ObjectStore } from "@sbx/sandbox-attest/store";

/** The address standing for "no manifest": that of {} (what `sbx run` records when none is given). */
export const NO_MANIFEST: Digest = addressOf({});

function lowered(env: string | undefined, have: bigint): bigint {
  if (env === undefined || !/^\d{1,20}$/.test(env)) return have;
  const v = BigInt(env);
  return v < have ? v : have;
}

/** hostOffer (§14.7) is what this host offers a unit; `storeRoot` is where snapshots go. */
export function hostOffer(storeRoot: string, env: NodeJS.ProcessEnv = process.env): HostOffer {
  let storage = 0n;
  try {
    const s = statfsSync(storeRoot, { bigint: true });
    storage = s.bavail * s.bsize;
  } catch {
    // unknown free space: nothing offered
  }
  return {
    cpus: Number(lowered(env.SBX_OFFER_CPUS, BigInt(availableParallelism()))),
    memory_bytes: String(lowered(env.SBX_OFFER_MEMORY_BYTES, BigInt(totalmem()))),
    storage_bytes: String(storage),
    gpu: null,
  };
}

/** storeManifest stores a manifest's environment under its address, so any host can check it later. */
export async function storeManifest(store: ObjectStore, m: Manifest): Promise<Digest> {
  return store.putObject(canonicalBytes(m.environment));
}

/**
 * checkEnvironment (§13.4) decides whether `offer` satisfies the manifest `address`, read from the
 * store. NO_MANIFEST is satisfied by any host; an absent, unreadable or mis-addressed manifest is not.
 */
export async function checkEnvironment(
  store: ObjectStore,
  address: Digest,
  offer: HostOffer,
): Promise<Satisfaction> {
  if (address === NO_MANIFEST) return { ok: true };
  const refused: Satisfaction = {
    ok: false,
    code: "ManifestMismatch",
    mismatches: [{ pointer: "", want: address, got: null }],
  };
  let bytes: Uint8Array | null;
  try {
    bytes = await store.getObject(address);
  } catch {
    return refused;
  }
  if (bytes === null) return refused;
  try {
    const environment = parseCanonical(bytes) as unknown as ManifestEnvironment;
    const m: Manifest = {
      type: MANIFEST_TYPE,
      address,
      name: null,
      environment,
      source: { digest: address, size: bytes.length },
      ignored: [],
    };
    return satisfies(m, offerFor(environment, offer), address);
  } catch {
    return refused;
  }
}
