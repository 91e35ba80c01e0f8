// Shared fixtures of the energy tests: fixed ids, host keys, and arbitrary well-formed components.
import fc from "fast-check";
import { addressOf, testKey, type Digest } from "@sbx/wire";
import {
  attribute,
  estimateCpu,
  estimateMemory,
  estimateStorage,
  measure,
  type EnergyComponent,
  type EnergyDomain,
} from "@sbx/sandbox-attest/energy";

export const UNIT: Digest = addressOf({ unit: "energy-test" });
export const GRANTS: Digest = addressOf({ grants: "energy-test" });
export const OTHER_GRANTS: Digest = addressOf({ grants: "another run" });
export const HOST = testKey("host");
export const MALLORY = testKey("mallory");

const domain = fc.constantFrom<EnergyDomain>("cpu", "memory", "storage", "gpu", "idle", "warmpool");
const amount = fc.bigInt({ min: 0n, max: 10n ** 12n });

/** arbComponent generates a well-formed component of any provenance. */
export const arbComponent: fc.Arbitrary<EnergyComponent> = fc.oneof(
  fc.tuple(domain, amount).map(([d, uj]) => measure(d, "rapl:package", uj)),
  fc
    .tuple(domain, amount, amount, amount)
    .filter(([, , a, b]) => b > 0n || a > 0n)
    .map(([d, s, a, b]) => {
      const [n, den] = a <= b ? [a, b] : [b, a];
      return attribute(d, "rapl:package", s, { numerator: n, denominator: den, basis: "cpu_us" });
    }),
  fc.tuple(domain, amount).map(([d, x]) => estimateCpu(x, { source: "proc:stat", domain: d })),
  fc.tuple(domain, amount).map(([d, x]) => estimateMemory(x, { source: "proc:stat", domain: d })),
  fc.tuple(domain, amount).map(([d, x]) => estimateStorage(x, { source: "workspace", domain: d })),
);

/** sample is a fixed mixed reading: one of each provenance. */
export function sampleComponents(): EnergyComponent[] {
  return [
    measure("gpu", "nvml:0", 1_000n),
    attribute("cpu", "rapl:package", 90_000_000n, { numerator: 25n, denominator: 100n, basis: "cpu_us" }),
    estimateMemory(123_456_789n, { source: "proc:stat" }),
  ];
}

/** mutable deep-copies a JSON value so a test can break it. */
export function mutable(v: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
}

/** hasCode matches a thrown error's `code`. */
export const hasCode = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
