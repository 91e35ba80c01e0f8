// §13, §13.7.4 sealInterval, the one sealing of a durable interval: a recovered one (the interval of
// a supervisor that is gone: no journal, no snapshots, no gate) and a live one (journaled, in a
// durable run, the gate held or not). For a fixed key and fixed inputs, each is checked against an
// independent statement of what it must sign: the predicate written out member by member (§7.2) and
// signed, the level by the rule of §9, the receipt as the first of its chain (§6.4).
import { test } from "node:test";
import assert from "node:assert/strict";
import { addressOf, canonicalBytes, digestBytes, envelopeAddress, testKey, utf8 } from "@sbx/wire";
import { signAttestation, verifyAttestation, type Outcome } from "@sbx/sandbox-attest/attestation";
import {
  estimateCpu,
  estimateMemory,
  startEnergyChain,
  verifyEnergyChain,
  type MeterReading,
} from "@sbx/sandbox-attest/energy";
import { Journal } from "@sbx/sandbox-attest/journal";
import type { Level } from "@sbx/sandbox-attest/unit";
import { sealInterval, type SealInput } from "../../src/durable/seal.ts";

const KEY = testKey("seal");
const UNIT = { fixture: "seal-unit", manifest: digestBytes(utf8("manifest")) };
const UNIT_ID = addressOf(UNIT);
const GRANTS = digestBytes(utf8("seal-grants"));
const MANIFEST = digestBytes(utf8("manifest"));
const POLICY = digestBytes(utf8("policy"));
const HEAD = digestBytes(utf8("run head"));
const READING: MeterReading = {
  start_ms: 1_700_000_000_000,
  end_ms: 1_700_000_004_000,
  components: [
    estimateCpu(2_500_000n, { source: "recovered:cgroup.cpu" }),
    estimateMemory(40_960n * 4000n, { source: "recovered:cgroup.memory" }),
  ],
  absent: ["meter"],
};
const LOST: Outcome = { status: "signaled", signal: "SIGKILL", stopped: "SupervisorLost" };

/**
 * §9, stated independently: S1 to S7 each add one guarantee, in this order; the level provided is
 * S<n> for the n guarantees provided from the bottom without a gap; a cap only lowers it.
 */
function ruleLevel(provided: readonly boolean[], cap?: Level): Level {
  let n = 0;
  while (n < provided.length && provided[n] === true) n++;
  const capN = cap === undefined ? 7 : Number(cap.slice(1));
  return `S${String(Math.min(n, capN))}` as Level;
}
// isolated, metered, attested (always, on this host), journaled, snapshots, processControl, auditChain (never).
const facts = (journaled: boolean, snapshots: boolean, gate: boolean): boolean[] => [
  true,
  true,
  true,
  journaled,
  snapshots,
  gate,
  false,
];

function input(over: Partial<SealInput> = {}): SealInput {
  return {
    chain: startEnergyChain(UNIT_ID, GRANTS),
    reading: READING,
    hostKey: KEY,
    unit: UNIT,
    unitId: UNIT_ID,
    grantsId: GRANTS,
    manifest: MANIFEST,
    execPolicy: POLICY,
    journal: new Journal(),
    outcome: LOST,
    provided: { journaled: false, snapshots: false, processControl: false },
    runHead: HEAD,
    ...over,
  };
}

test("a recovered interval: S3, no journal events, signaled SIGKILL stopped SupervisorLost, the predicate as §7.2 writes it", () => {
  const s = sealInterval(input());
  // The receipt: the first of the run's chain, signed by the key, covering the reading.
  const chain = verifyEnergyChain([s.receipt.envelope], {
    unit_id: UNIT_ID,
    grants_id: GRANTS,
    hosts: [KEY.did],
    head: s.receipt.state.head,
  });
  assert.equal(chain.receipts.length, 1);
  assert.equal(s.receiptAddress, envelopeAddress(s.receipt.envelope));
  const total = READING.components.reduce((a, c) => a + BigInt(c.uj), 0n);
  assert.equal(s.receipt.receipt.total_uj, total.toString());
  assert.equal(s.receipt.state.seq, 1);
  assert.equal(s.receipt.state.last_end_ms, READING.end_ms);

  const v = verifyAttestation(s.attestation, {
    host: KEY.did,
    unitId: UNIT_ID,
    unit: UNIT,
    grantsId: GRANTS,
    manifest: MANIFEST,
    policy: POLICY,
    receipt: s.receiptAddress,
    journalEvents: 0,
    runHead: HEAD,
  });
  assert.equal(v.address, s.address);
  assert.equal(s.address, envelopeAddress(s.attestation));
  assert.equal(v.predicate.level, "S3");
  assert.equal(s.level, "S3");
  assert.equal(ruleLevel(facts(false, false, false)), "S3");
  assert.equal(v.predicate.journal.events, 0);
  assert.deepEqual(
    { ...v.predicate.outcome },
    { status: "signaled", signal: "SIGKILL", stopped: "SupervisorLost" },
  );
  assert.equal(v.predicate.energy.provenance, "estimated");

  // Every byte: the predicate written out here, member by member in §7.2's order, signed by the key.
  const empty = new Journal().head();
  const expected = signAttestation(
    {
      unit_id: UNIT_ID,
      grants_id: GRANTS,
      manifest: MANIFEST,
      exec_policy: POLICY,
      energy: { receipt: s.receiptAddress, total_uj: total.toString(), provenance: "estimated" },
      journal: { root: empty.root, events: 0 },
      outcome: LOST,
      interval: { start_ms: READING.start_ms, end_ms: READING.end_ms },
      level: "S3",
      run_head: HEAD,
    },
    KEY,
    UNIT,
  );
  assert.deepEqual(canonicalBytes(s.attestation), canonicalBytes(expected));
});

test("a live interval (journaled, snapshots) states a higher level than a recovered one, by §9's rule", () => {
  const journal = new Journal();
  journal.append({ type: "process.start", pid: 7, argv: ["/bin/true"], binary: digestBytes(utf8("true")) });
  journal.append({ type: "process.exit", pid: 7, code: 0, signal: null });
  const exited: Outcome = { status: "exited", exit_code: 0 };
  const recovered = sealInterval(input());
  const cases: { gate: boolean; cap?: Level; want: Level }[] = [
    { gate: false, want: "S5" },
    { gate: true, want: "S6" },
    { gate: true, cap: "S4", want: "S4" },
    { gate: false, cap: "S7", want: "S5" },
  ];
  for (const c of cases) {
    const s = sealInterval(
      input({
        journal,
        outcome: exited,
        provided: { journaled: true, snapshots: true, processControl: c.gate },
        ...(c.cap !== undefined ? { maxLevel: c.cap } : {}),
      }),
    );
    const v = verifyAttestation(s.attestation, { host: KEY.did, unit: UNIT, runHead: HEAD });
    assert.equal(ruleLevel(facts(true, true, c.gate), c.cap), c.want);
    assert.equal(v.predicate.level, c.want, JSON.stringify(c));
    assert.equal(s.level, c.want);
    assert.equal(v.predicate.journal.events, 2);
    assert.equal(v.predicate.journal.root, journal.head().root);
    assert.deepEqual({ ...v.predicate.outcome }, exited);
    if (c.cap === undefined) assert.ok(Number(c.want.slice(1)) > Number(recovered.level.slice(1)));
    // Same chain, same reading, same key: the same receipt, whatever the level.
    assert.deepEqual(canonicalBytes(s.receipt.envelope), canonicalBytes(recovered.receipt.envelope));
  }
});

test("beforeSign runs after the receipt is made and may refuse: nothing is signed", () => {
  let calls = 0;
  assert.throws(
    () =>
      sealInterval(
        input({
          beforeSign: () => {
            calls++;
            throw new Error("refused");
          },
        }),
      ),
    /refused/,
  );
  assert.equal(calls, 1);
  // A receipt that cannot be made (it overlaps the chain's last interval) is refused first.
  const later = { ...startEnergyChain(UNIT_ID, GRANTS), last_end_ms: READING.end_ms };
  assert.throws(
    () =>
      sealInterval(
        input({
          chain: later,
          beforeSign: () => {
            calls++;
          },
        }),
      ),
    (e: unknown) => (e as { code?: string }).code === "EnergyIntervalOverlap",
  );
  assert.equal(calls, 1);
});
