// §13.6 The idle energy of a parked interval: what the host retained while the run was parked. The
// frozen processes' resident memory (KiB·ms, read from the run's cgroup at suspension and at
// resumption) and the snapshot's bytes kept in the store (MiB·s) go through the §6.3 models. No
// meter on this host belongs to a parked run alone, so the figure is `estimated`, always with its
// model inputs and coefficients; nothing retained (no memory after --release) counts as zero input.
import { formatAmount } from "@sbx/wire";
import { CCF_DEFAULTS, estimateMemory, estimateStorage } from "@sbx/sandbox-attest/energy";
import type { IdleEnergy } from "@sbx/sandbox-attest/runrecord";

/** What a parked run retained, and for how long. */
export interface Retained {
  /** Milliseconds from suspension to resumption (negative clocks count as zero). */
  readonly parkedMs: number;
  /** Resident bytes of the frozen processes (mean of the two readings), or 0n when released. */
  readonly residentBytes: bigint;
  /** Bytes of file content the snapshot holds in the store. */
  readonly snapshotBytes: bigint;
}

/** The model source stated for a parked interval's idle energy. */
export const IDLE_SOURCE = "model:ccf.memory/1+ccf.storage/1";

/** idleEnergy (§13.6) estimates a parked interval's idle energy, stating both models' inputs and coefficients. */
export function idleEnergy(r: Retained): IdleEnergy {
  const ms = BigInt(Math.max(0, Math.floor(r.parkedMs)));
  const kibMs = (r.residentBytes / 1024n) * ms;
  const mibS = (r.snapshotBytes * ms) / (1_048_576n * 1000n);
  const mem = estimateMemory(kibMs, { source: "cgroup memory of the frozen sandbox" });
  const sto = estimateStorage(mibS, { source: "snapshot bytes in the store" });
  return {
    uj: formatAmount(BigInt(mem.uj) + BigInt(sto.uj)),
    provenance: "estimated",
    source: IDLE_SOURCE,
    basis: {
      kib_ms: formatAmount(kibMs),
      uw_per_gib: String(CCF_DEFAULTS.memory.uw_per_gib),
      mib_s: formatAmount(mibS),
      uw_per_tib: String(CCF_DEFAULTS.storage.uw_per_tib),
    },
  };
}
