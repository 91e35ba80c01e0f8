// §6.3 RAPL through the Linux powercap interface: /sys/class/powercap/intel-rapl:N[:M]/{name,
// energy_uj, max_energy_range_uj}. The counter wraps at max_energy_range_uj, so deltas are taken
// modulo that range; a reader must sample more often than one wrap period (tens of minutes at
// full package power) for a delta to be exact.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { HostError } from "../errors.ts";

/** The default powercap root (§6.3). Tests lay out a fake tree and pass its directory instead. */
export const POWERCAP_ROOT = "/sys/class/powercap";

/** One RAPL zone read at one instant. */
export interface RaplZone {
  /** The zone's directory name, e.g. "intel-rapl:0" (a package) or "intel-rapl:0:1" (a subzone). */
  readonly id: string;
  /** The zone's `name` file: "package-0", "core", "uncore", "dram", "psys". */
  readonly name: string;
  readonly energy_uj: bigint;
  readonly max_energy_range_uj: bigint;
}

const ZONE_RE = /^intel-rapl:\d+(:\d+)*$/;

function readCounter(path: string): bigint {
  let text: string;
  try {
    text = readFileSync(path, "utf8").trim();
  } catch (e) {
    throw new HostError("BadPowercap", `cannot read ${path}`, { cause: e });
  }
  if (!/^\d{1,20}$/.test(text)) throw new HostError("BadPowercap", `${path} holds ${JSON.stringify(text)}`);
  return BigInt(text);
}

/**
 * readRaplZones reads every RAPL zone under `root` (§6.3), sorted by id. A root that does not exist,
 * or holds no intel-rapl zone, yields [] (RAPL absent). Refuses an unreadable or malformed counter,
 * or a counter above its range (`BadPowercap`).
 */
export function readRaplZones(root: string = POWERCAP_ROOT): RaplZone[] {
  if (!existsSync(root)) return [];
  const zones: RaplZone[] = [];
  for (const id of readdirSync(root)
    .filter((n) => ZONE_RE.test(n))
    .sort()) {
    const dir = join(root, id);
    if (!existsSync(join(dir, "energy_uj"))) continue;
    const name = readFileSync(join(dir, "name"), "utf8").trim();
    const energy_uj = readCounter(join(dir, "energy_uj"));
    const max_energy_range_uj = readCounter(join(dir, "max_energy_range_uj"));
    if (max_energy_range_uj === 0n || energy_uj > max_energy_range_uj)
      throw new HostError("BadPowercap", `${id}: energy ${energy_uj} outside range ${max_energy_range_uj}`);
    zones.push({ id, name, energy_uj, max_energy_range_uj });
  }
  return zones;
}

/**
 * raplDelta is the energy between two readings of one counter (§6.3): end − start, or, when the
 * counter wrapped, (range − start) + end. Refuses readings outside [0, range] (`BadPowercap`).
 */
export function raplDelta(start: bigint, end: bigint, range: bigint): bigint {
  if (start < 0n || end < 0n || start > range || end > range)
    throw new HostError("BadPowercap", `readings ${start}, ${end} outside range ${range}`);
  return end >= start ? end - start : range - start + end;
}

/** isPackageZone (§6.3): a top-level zone named package-N (psys is left out: it would count the package twice). */
export function isPackageZone(z: RaplZone): boolean {
  return /^intel-rapl:\d+$/.test(z.id) && z.name.startsWith("package");
}

/** isDramZone (§6.3): a zone named dram (a package's subzone, or a top-level zone on some servers). */
export function isDramZone(z: RaplZone): boolean {
  return z.name === "dram";
}

/** A RAPL accumulator: energy per zone id summed over successive readings, wraps handled. */
export interface RaplAccumulator {
  readonly zones: readonly RaplZone[];
  /** Reads every zone again and adds each zone's delta since the last read. */
  poll(): void;
  /** Takes the summed energy of the zones `pick` selects, and starts the next sum at zero. */
  take(pick: (z: RaplZone) => boolean): bigint;
  /** The summed energy of the zones `pick` selects so far, without starting a new sum. */
  peek(pick: (z: RaplZone) => boolean): bigint;
}

/**
 * raplAccumulator starts accumulating RAPL energy under `root` (§6.3); null when RAPL is absent.
 * Refuses what readRaplZones refuses, and a zone that disappears between reads (`BadPowercap`).
 */
export function raplAccumulator(root: string = POWERCAP_ROOT): RaplAccumulator | null {
  let last = readRaplZones(root);
  if (last.length === 0) return null;
  const sums = new Map<string, bigint>(last.map((z) => [z.id, 0n]));
  const zones = last;
  return {
    zones,
    poll() {
      const now = new Map(readRaplZones(root).map((z) => [z.id, z]));
      for (const z of last) {
        const n = now.get(z.id);
        if (n === undefined) throw new HostError("BadPowercap", `zone ${z.id} disappeared`);
        sums.set(z.id, (sums.get(z.id) ?? 0n) + raplDelta(z.energy_uj, n.energy_uj, z.max_energy_range_uj));
      }
      last = zones.map((z) => now.get(z.id) ?? z);
    },
    peek(pick) {
      return zones.filter(pick).reduce((t, z) => t + (sums.get(z.id) ?? 0n), 0n);
    },
    take(pick) {
      let total = 0n;
      for (const z of zones.filter(pick)) {
        total += sums.get(z.id) ?? 0n;
        sums.set(z.id, 0n);
      }
      return total;
    },
  };
}
