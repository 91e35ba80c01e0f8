// Fleet test helpers: deterministic random items.
import { formatDigest, blake3, utf8 } from "@sbx/wire";
import type { FleetItem, FleetOutcome } from "@sbx/sandbox-attest/fleet";

const OUTCOMES: FleetOutcome[] = ["completed", "failed", "abandoned"];

/** makeItems returns n distinct items with energies drawn from `seed` (below 2^40 each). */
export function makeItems(n: number, seed = 1): FleetItem[] {
  const out: FleetItem[] = [];
  let x = BigInt(seed) * 0x9e3779b97f4a7c15n;
  for (let i = 0; i < n; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
    out.push({
      item: `item-${seed}-${i}`,
      head: formatDigest(blake3(utf8(`${seed}/${i}`))),
      energy_uj: (x >> 24n).toString(),
      outcome: OUTCOMES[i % 3] as FleetOutcome,
    });
  }
  return out;
}
