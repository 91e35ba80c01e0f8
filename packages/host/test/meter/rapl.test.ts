// §6.3 the RAPL reader against a directory laid out like /sys/class/powercap, wraparound included.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { raplAccumulator, raplDelta, readRaplZones, isPackageZone, isDramZone } from "@sbx/host/meter";
import { RANGE, fakePowercap, hasCode, setCounter } from "./fakes.ts";

test("reads every intel-rapl zone with its name, counter and range", () => {
  const root = fakePowercap();
  const zones = readRaplZones(root);
  assert.deepEqual(
    zones.map((z) => [z.id, z.name, z.energy_uj, z.max_energy_range_uj]),
    [
      ["intel-rapl:0", "package-0", 1_000_000n, RANGE],
      ["intel-rapl:0:0", "core", 500_000n, RANGE],
      ["intel-rapl:0:1", "dram", 2_000n, RANGE],
      ["intel-rapl:1", "psys", 9_000_000n, RANGE],
    ],
  );
  assert.deepEqual(
    zones.filter(isPackageZone).map((z) => z.id),
    ["intel-rapl:0"],
  );
  assert.deepEqual(
    zones.filter(isDramZone).map((z) => z.id),
    ["intel-rapl:0:1"],
  );
});

test("an absent powercap tree is RAPL absent, not an error", () => {
  assert.deepEqual(readRaplZones("/nonexistent/powercap"), []);
  assert.equal(raplAccumulator("/nonexistent/powercap"), null);
});

test("this machine: /sys/class/powercap is reported as it is", () => {
  const zones = readRaplZones();
  // Whatever this host has, the reader agrees with the directory (none on a VM without RAPL).
  assert.equal(zones.length > 0, existsSync("/sys/class/powercap/intel-rapl:0/energy_uj"));
});

test("deltas: plain, and modulo max_energy_range_uj across a wraparound", () => {
  assert.equal(raplDelta(100n, 250n, RANGE), 150n);
  assert.equal(raplDelta(RANGE - 10n, 5n, RANGE), 15n);
  assert.equal(raplDelta(7n, 7n, RANGE), 0n);
  assert.throws(() => raplDelta(0n, RANGE + 1n, RANGE), hasCode("BadPowercap"));
});

test("the accumulator sums successive deltas through a wrap", () => {
  const root = fakePowercap();
  setCounter(root, "intel-rapl:0", RANGE - 1_000n);
  const acc = raplAccumulator(root);
  assert.ok(acc);
  setCounter(root, "intel-rapl:0", RANGE - 200n);
  acc.poll();
  setCounter(root, "intel-rapl:0", 300n); // wrapped: 200 to the top, then 300
  acc.poll();
  setCounter(root, "intel-rapl:0:1", 2_500n);
  acc.poll();
  assert.equal(acc.take(isPackageZone), 800n + 500n);
  assert.equal(acc.take(isDramZone), 500n);
  assert.equal(acc.take(isPackageZone), 0n);
});

test("malformed and out-of-range counters are refused", () => {
  const root = fakePowercap();
  writeFileSync(join(root, "intel-rapl:0", "energy_uj"), "12abc\n");
  assert.throws(() => readRaplZones(root), hasCode("BadPowercap"));
  setCounter(root, "intel-rapl:0", RANGE + 1n);
  assert.throws(() => readRaplZones(root), hasCode("BadPowercap"));
});
