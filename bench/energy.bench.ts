// §6 energy: verifying signed receipts and receipt chains, and one meter sample, each against the
// anchor of opening a DSSE envelope of the same payload bytes with no §6 checks (same run).
import { addressOf, openEnvelope, testKey, type Envelope } from "@sbx/wire";
import {
  ENERGY_RECEIPT_TYPE,
  attribute,
  estimateCpu,
  estimateMemory,
  makeReceipt,
  measure,
  openReceipt,
  startEnergyChain,
  verifyEnergyChain,
  type MeterReading,
} from "@sbx/sandbox-attest/energy";
import { startMeter } from "@sbx/host/meter";
import { rate, row, timeRuns } from "./measure.ts";

const host = testKey("host");
const unit = addressOf({ bench: "energy" });
const grants = addressOf({ bench: "grants" });

function reading(i: number): MeterReading {
  const components = [
    measure("gpu", "nvml:0", 1_500_000n + BigInt(i)),
    attribute("cpu", "rapl:package", 90_000_000n, { numerator: 1n, denominator: 4n, basis: "cpu_us" }),
    estimateCpu(2_000_000n, { source: "cgroup2:cpu.stat" }),
    estimateMemory(123_456_789n, { source: "proc:stat.rss" }),
  ];
  return { start_ms: 1000 * i, end_ms: 1000 * i + 900, components, absent: ["rapl.dram"] };
}

function chainOf(n: number): Envelope[] {
  let s = startEnergyChain(unit, grants);
  const out: Envelope[] = [];
  for (let i = 0; i < n; i++) {
    const m = makeReceipt(s, reading(i), host);
    out.push(m.envelope);
    s = m.state;
  }
  return out;
}

export default function energyBench(): Promise<void> {
  const n = 200;
  const envs = chainOf(n);
  const one = envs[0]!;
  const anchor = timeRuns(7, () => {
    for (let i = 0; i < n; i++) openEnvelope(one, { payloadType: ENERGY_RECEIPT_TYPE });
  });
  row("anchor: DSSE open of a receipt payload", rate(n / anchor));
  const receipt = timeRuns(7, () => {
    for (let i = 0; i < n; i++) openReceipt(one, { hosts: [host.did] });
  });
  row("openReceipt (signature + §6.1/§6.2 checks)", rate(n / receipt), anchor / receipt, "anchor");
  const chain = timeRuns(5, () => verifyEnergyChain(envs, { unit_id: unit, grants_id: grants }));
  row(`verifyEnergyChain, ${n} receipts (per receipt)`, rate(n / chain), anchor / chain, "anchor");
  const meter = startMeter({ pid: process.pid }, { sampleMs: 0 });
  const sample = timeRuns(7, () => {
    for (let i = 0; i < 50; i++) meter.sample();
  });
  meter.stop();
  row("meter.sample() of this process (/proc)", rate(50 / sample), anchor / n / (sample / 50), "anchor");
  return Promise.resolve();
}
