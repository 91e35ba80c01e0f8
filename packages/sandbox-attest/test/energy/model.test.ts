// §6.3 models: known figures, the refusals, and the integer formula against a literal rational reference.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  CCF_DEFAULTS,
  estimateCpu,
  estimateEnergy,
  estimateMemory,
  estimateStorage,
  modelEnergy,
  type Model,
} from "@sbx/sandbox-attest/energy";

const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;

test("one CPU-second at full utilisation is 3.5 J; at zero utilisation 0.74 J", () => {
  assert.equal(estimateCpu(1_000_000n, { source: "t" }).uj, "3500000");
  const idle = { ...CCF_DEFAULTS.cpu, utilisation_ppm: 0 };
  assert.equal(estimateCpu(1_000_000n, { source: "t", coefficients: idle }).uj, "740000");
  const half = { ...CCF_DEFAULTS.cpu, utilisation_ppm: 500_000 };
  assert.equal(estimateCpu(1_000_000n, { source: "t", coefficients: half }).uj, "2120000");
});

test("one resident GiB-second is 0.392 J; one stored TiB-hour is 1.2 Wh", () => {
  assert.equal(estimateMemory(1024n * 1024n * 1000n, { source: "t" }).uj, "392000");
  assert.equal(estimateStorage(1024n * 1024n * 3600n, { source: "t" }).uj, String(1.2 * 3600 * 1e6));
});

test("estimateEnergy records every coefficient and labels each term estimated", () => {
  const cs = estimateEnergy({ vcpu_us: 2_000_000n, kib_ms: 5_000n, mib_s: 7n }, { cpu: "cgroup2:cpu.stat" });
  assert.deepEqual(
    cs.map((c) => [c.domain, c.provenance, c.model.name, c.source]),
    [
      ["cpu", "estimated", "ccf.cpu/1", "cgroup2:cpu.stat"],
      ["memory", "estimated", "ccf.memory/1", "activity:memory"],
      ["storage", "estimated", "ccf.storage/1", "activity:storage"],
    ],
  );
  assert.deepEqual(cs[0]?.model.coefficients, CCF_DEFAULTS.cpu);
  assert.deepEqual(estimateEnergy({}, {}), []);
});

test("models refuse unknown names, missing, extra and out-of-range coefficients", () => {
  const cpu = estimateCpu(10n, { source: "t" }).model;
  const m = (x: unknown) => () => modelEnergy(x as Model);
  assert.throws(m({ ...cpu, name: "ccf.cpu/2" }), code("UnknownModel"));
  assert.throws(m({ ...cpu, coefficients: {} }), code("BadCoefficients"));
  assert.throws(m({ ...cpu, coefficients: { ...cpu.coefficients, x: 1 } }), code("BadCoefficients"));
  assert.throws(m({ ...cpu, inputs: {} }), code("BadCoefficients"));
  const c = cpu.coefficients as unknown as Record<string, number>;
  assert.throws(m({ ...cpu, coefficients: { ...c, utilisation_ppm: 1_000_001 } }), code("BadCoefficients"));
  assert.throws(m({ ...cpu, coefficients: { ...c, min_uw_per_vcpu: 4_000_000 } }), code("BadCoefficients"));
  assert.throws(m({ ...cpu, coefficients: { ...c, max_uw_per_vcpu: -1 } }), code("BadCoefficients"));
  assert.throws(m({ ...cpu, coefficients: { ...c, max_uw_per_vcpu: 1.5 } }), code("BadCoefficients"));
  assert.throws(m({ ...cpu, inputs: { vcpu_us: "01" } }), code("BadAmount"));
});

// Literal reference: watts as exact fractions, seconds as exact fractions, floor of the product.
function refFloor(num: bigint, den: bigint): bigint {
  return num / den;
}
function refCpu(us: bigint, min: bigint, max: bigint, ppm: bigint): bigint {
  // P = min + (ppm/1e6)(max − min) µW, as the fraction (min·1e6 + ppm·(max−min)) / 1e6; t = us / 1e6 s.
  const pNum = min * 1_000_000n + ppm * (max - min);
  return refFloor(pNum * us, 1_000_000n * 1_000_000n);
}

test("ccf.cpu/1 equals the rational reference on random inputs", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: 10n ** 15n }),
      fc.nat(5_000_000),
      fc.nat(5_000_000),
      fc.nat(1_000_000),
      (us, a, b, ppm) => {
        const [min, max] = a <= b ? [a, b] : [b, a];
        const coefficients = { min_uw_per_vcpu: min, max_uw_per_vcpu: max, utilisation_ppm: ppm };
        const got = BigInt(estimateCpu(us, { source: "t", coefficients }).uj);
        assert.equal(got, refCpu(us, BigInt(min), BigInt(max), BigInt(ppm)));
      },
    ),
  );
});

test("memory and storage scale linearly and never exceed their exact rationals", () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 10n ** 14n }), fc.nat(10_000_000), (x, w) => {
      const mem = BigInt(estimateMemory(x, { source: "t", coefficients: { uw_per_gib: w } }).uj);
      assert.ok(mem * 1_048_576_000n <= x * BigInt(w) && x * BigInt(w) < (mem + 1n) * 1_048_576_000n);
      const sto = BigInt(estimateStorage(x, { source: "t", coefficients: { uw_per_tib: w } }).uj);
      assert.ok(sto * 1_048_576n <= x * BigInt(w) && x * BigInt(w) < (sto + 1n) * 1_048_576n);
    }),
  );
});
