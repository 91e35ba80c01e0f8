// §6.4 receipt chains: a run's receipts verify in order; gap, reorder, splice, overlap and truncation are refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { chainGenesis, chainHeads, digestBytes, signPayload, type Envelope } from "@sbx/wire";
import {
  ENERGY_CHAIN_TAG,
  ENERGY_RECEIPT_TYPE,
  energyGenesis,
  estimateCpu,
  makeReceipt,
  startEnergyChain,
  verifyEnergyChain,
  type EnergyChainState,
  type MeterReading,
} from "@sbx/sandbox-attest/energy";
import { GRANTS, HOST, OTHER_GRANTS, UNIT, hasCode } from "./fixtures.ts";

function reading(i: number): MeterReading {
  return {
    start_ms: 1000 * i,
    end_ms: 1000 * i + 900,
    components: [estimateCpu(BigInt(1000 + i), { source: "proc:stat" })],
    absent: ["rapl"],
  };
}
function run(n: number, grants = GRANTS): { envs: Envelope[]; state: EnergyChainState } {
  let state = startEnergyChain(UNIT, grants);
  const envs: Envelope[] = [];
  for (let i = 0; i < n; i++) {
    const m = makeReceipt(state, reading(i), HOST);
    envs.push(m.envelope);
    state = m.state;
  }
  return { envs, state };
}
const opts = { unit_id: UNIT, grants_id: GRANTS, hosts: [HOST.did] };

test("genesis binds the tag, unit_id and grants_id; heads follow the wire chain", () => {
  assert.equal(energyGenesis(UNIT, GRANTS), chainGenesis(ENERGY_CHAIN_TAG, [UNIT, GRANTS]));
  assert.notEqual(energyGenesis(UNIT, GRANTS), energyGenesis(UNIT, OTHER_GRANTS));
  const { envs, state } = run(4);
  const v = verifyEnergyChain(envs, { ...opts, head: state.head });
  assert.deepEqual(chainHeads(ENERGY_CHAIN_TAG, [UNIT, GRANTS], v.receipts).at(-1), state.head);
  assert.equal(v.receipts.length, 4);
  assert.equal(v.total_uj, v.receipts.reduce((s, r) => s + BigInt(r.total_uj), 0n).toString());
  assert.deepEqual(verifyEnergyChain([], opts).state, startEnergyChain(UNIT, GRANTS));
});

test("a chain verifies in pieces when continued from a verified state", () => {
  const { envs, state } = run(5);
  const first = verifyEnergyChain(envs.slice(0, 2), opts);
  assert.equal(
    verifyEnergyChain(envs.slice(2), { ...opts, from: first.state, head: state.head }).state.seq,
    5,
  );
});

test("gap, reorder, duplicate, splice across runs and truncation are refused", () => {
  const { envs, state } = run(5);
  const other = run(5, OTHER_GRANTS).envs;
  const [a, b, c, d, e] = envs as [Envelope, Envelope, Envelope, Envelope, Envelope];
  const cases: [string, Envelope[], object][] = [
    ["EnergyChainGap", [a, b, d, e], {}],
    ["EnergyChainGap", [b, c], {}],
    ["EnergyChainReorder", [a, c, b, d, e], {}],
    ["EnergyChainReorder", [a, b, b, c], {}],
    ["EnergyChainSplice", [a, b, other[2]!, d], {}],
    ["EnergyChainHeadMismatch", [a, b, c, d], { head: state.head }],
  ];
  for (const [i, [code, list, extra]] of cases.entries())
    assert.throws(() => verifyEnergyChain(list, { ...opts, ...extra }), hasCode(code), `case ${i}`);
});

test("a fork of the same run (same seq, other history) is a splice; an overlapping interval is refused", () => {
  const { envs } = run(3);
  const s0 = startEnergyChain(UNIT, GRANTS);
  const fork = makeReceipt(
    makeReceipt(s0, { ...reading(0), end_ms: 901 }, HOST).state,
    reading(1),
    HOST,
  ).envelope;
  assert.throws(() => verifyEnergyChain([envs[0]!, fork], opts), hasCode("EnergyChainSplice"));
  const s1 = makeReceipt(s0, reading(0), HOST).state;
  assert.throws(
    () => makeReceipt(s1, { ...reading(1), start_ms: 899 }, HOST),
    hasCode("EnergyIntervalOverlap"),
  );
});

test("property: re-signing a receipt with any chain field changed never yields a valid chain", () => {
  const { envs } = run(5);
  const receipts = verifyEnergyChain(envs, opts).receipts;
  const fields = ["seq", "prev", "unit_id", "grants_id", "start_ms"] as const;
  fc.assert(
    fc.property(
      fc.nat(4),
      fc.constantFrom(...fields),
      fc.integer({ min: 1, max: 3 }),
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      (i, field, k, raw) => {
        const p = JSON.parse(JSON.stringify(receipts[i])) as Record<string, unknown>;
        const other = digestBytes(raw);
        if (field === "seq") p.seq = (p.seq as number) + (i === 0 || k % 2 ? k : -k);
        else if (field === "start_ms")
          p.start_ms = i === 0 ? p.start_ms : (p.start_ms as number) - 100 * k - 1000;
        else p[field] = other;
        if (field === "start_ms" && i === 0) return; // the first interval has no predecessor to overlap
        if (field === "start_ms" && (p.start_ms as number) < 0) p.start_ms = 0;
        const list = envs.map((e, j) => (j === i ? signPayload(ENERGY_RECEIPT_TYPE, p, HOST) : e));
        // No final head given: the chain rules alone must catch it, wherever the receipt sits.
        assert.throws(() => verifyEnergyChain(list, opts));
      },
    ),
    { numRuns: 120 },
  );
});
