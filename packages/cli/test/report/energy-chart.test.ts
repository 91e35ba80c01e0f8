// The energy chart's figures (issue 38, report/page/energy.ts), checked under Node against a literal
// restatement: a figure in the largest unit of joules that keeps it at least 1, to 3 significant
// digits; a tick step of 1, 2, 2.5 or 5 × a power of ten covering the largest bar in at most 4 ticks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { energySvg, joules, niceStep, type EnergyBar } from "../../src/report/page/energy.ts";

function literalJoules(uj: number): string {
  if (uj === 0) return "0 J";
  const units: [number, string][] = [
    [1e12, "MJ"],
    [1e9, "kJ"],
    [1e6, "J"],
    [1e3, "mJ"],
    [1, "µJ"],
  ];
  for (const [scale, unit] of units) if (uj >= scale) return `${Number((uj / scale).toPrecision(3))} ${unit}`;
  return `${uj} µJ`;
}

test("joules agrees with the literal restatement at every unit boundary and on random figures", () => {
  const cases = [0, 1, 999, 1000, 1001, 46078, 999_999, 1_000_000, 2_134_050, 1e9, 3.5e12];
  for (let i = 0; i < 200; i++) cases.push(Math.floor(Math.random() * 1e13));
  for (const [i, uj] of cases.entries())
    assert.equal(joules(BigInt(uj)), literalJoules(uj), `case ${i}: ${uj}`);
});

test("niceStep covers the largest bar in at most 4 ticks with a 1/2/2.5/5 step", () => {
  for (let i = 0; i < 500; i++) {
    const max = 1 + Math.floor(Math.random() * 1e12);
    const step = niceStep(max);
    const mant = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
    assert.ok(
      [1, 2, 2.5, 5].some((m) => Math.abs(mant - m) < 1e-9),
      `case ${i}: step ${step}`,
    );
    assert.ok(Math.ceil(max / step) <= 4, `case ${i}: ${max} in ${Math.ceil(max / step)} ticks of ${step}`);
  }
});

test("energySvg: active and idle panels each with a titled axis; one alone without the other", () => {
  const bar = (n: number, idle: boolean, uj: bigint): EnergyBar => ({
    n,
    label: `#${n}`,
    idle,
    measured: 0n,
    attributed: 0n,
    estimated: uj,
    bad: false,
  });
  const both = energySvg([bar(1, false, 46078n), bar(3, true, 236n)]);
  assert.equal(both.match(/class="axis-title"/g)?.length, 2);
  assert.match(both, /idle energy while parked \(joules\)/);
  const active = energySvg([bar(1, false, 46078n)]);
  assert.equal(active.match(/class="axis-title"/g)?.length, 1);
  assert.doesNotMatch(active, /outlined red/, "no red in the legend when nothing failed");
});
