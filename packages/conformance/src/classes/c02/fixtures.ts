// C2 fixtures: the fixed run, a mixed reading with one figure of each provenance, and chains of it.
import { addressOf, type Envelope, type Json, type JsonObject } from "@sbx/wire";
import {
  attribute,
  estimateCpu,
  estimateMemory,
  estimateStorage,
  makeReceipt,
  measure,
  startEnergyChain,
  type EnergyComponent,
  type EnergyReceipt,
  type MeterReading,
} from "@sbx/sandbox-attest/energy";
import { key } from "../../generate/keys.ts";

export const C = "C2" as const;
export const UNIT = addressOf({ unit: "c2", argv: ["make", "test"] });
export const GRANTS = addressOf({ grants: "c2" });
export const OTHER_GRANTS = addressOf({ grants: "c2-other-run" });
export const host = key("host");

/** The fixed mixed reading: one figure of each provenance, and a warm-pool claim with its ledger ref. */
export function mixed(): EnergyComponent[] {
  return [
    measure("gpu", "nvml:0", 1_500_000n),
    attribute("cpu", "rapl:package", 90_000_000n, {
      numerator: 250_000n,
      denominator: 1_000_000n,
      basis: "cpu_us cgroup2:cpu.stat / cgroup2:cpu.stat@root",
    }),
    estimateMemory(123_456_789n, { source: "proc:stat.rss" }),
    estimateStorage(3_600n, { source: "workspace" }),
    {
      ...estimateCpu(2_000_000n, {
        source: "pool:reserved",
        domain: "warmpool",
        coefficients: { min_uw_per_vcpu: 740_000, max_uw_per_vcpu: 3_500_000, utilisation_ppm: 0 },
      }),
      ref: addressOf({ pool: "claim" }),
    },
  ];
}
export function reading(i: number, components: EnergyComponent[] = mixed()): MeterReading {
  return {
    start_ms: 1_764_000_000_000 + 1000 * i,
    end_ms: 1_764_000_000_000 + 1000 * i + 900,
    components,
    absent: i % 2 ? [] : ["rapl.dram"],
  };
}
export function chain(
  n: number,
  grants = GRANTS,
): { envs: Envelope[]; receipts: EnergyReceipt[]; head: string } {
  let s = startEnergyChain(UNIT, grants);
  const envs: Envelope[] = [];
  const receipts: EnergyReceipt[] = [];
  for (let i = 0; i < n; i++) {
    const m = makeReceipt(s, reading(i), host);
    envs.push(m.envelope);
    receipts.push(m.receipt);
    s = m.state;
  }
  return { envs, receipts, head: s.head };
}
export const J = (v: unknown): Json => JSON.parse(JSON.stringify(v)) as Json;
export const chainInput = (envelopes: unknown[], extra: JsonObject = {}): Json =>
  J({ envelopes, unit_id: UNIT, grants_id: GRANTS, hosts: [host.did], ...extra });
