import { test } from "node:test";
import assert from "node:assert/strict";
import { envelopeAddress, testKey, type Json } from "@sbx/wire";
import { verifyInterval, type PredicateInput } from "../../src/attestation/index.ts";
import {
  estimateCpu,
  makeReceipt,
  measure,
  startEnergyChain,
  weakestProvenance,
} from "../../src/energy/index.ts";
import { Journal } from "../../src/journal/index.ts";
import { attest, d, fixturePredicate, host } from "./fixture.ts";

const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
const unit = d("unit");
const grants = d("grants");

/** interval makes a receipt, a journal and the predicate that binds both. */
function interval(over: Partial<PredicateInput> = {}, chainUnit = unit) {
  const components = [estimateCpu(250_000n, { source: "cgroup2:cpu.stat" }), measure("gpu", "nvml:0", 42n)];
  const reading = { start_ms: 1000, end_ms: 1400, components, absent: ["rapl"] };
  const made = makeReceipt(startEnergyChain(chainUnit, grants), reading, host);
  const j = new Journal();
  j.append({ type: "process.start", pid: 7, argv: ["true"], binary: d("bin") });
  j.append({ type: "process.exit", pid: 7, code: 0, signal: null });
  const head = j.head();
  const energy = {
    receipt: envelopeAddress(made.envelope),
    total_uj: made.receipt.total_uj,
    provenance: weakestProvenance(made.receipt.components),
  };
  const p = fixturePredicate({
    energy,
    journal: { root: head.root, events: head.size },
    interval: { start_ms: 1000, end_ms: 1400 },
    ...over,
  });
  return { receipt: made.envelope, events: j.events as unknown as Json[], p };
}

test("an attested interval verifies against its receipt and journal", () => {
  const { receipt, events, p } = interval();
  const v = verifyInterval(attest(p, host), { receipt, events });
  assert.equal(v.receipt.receipt.total_uj, p.energy.total_uj);
  assert.equal(p.energy.provenance, "estimated");
});

test("a predicate that overstates provenance, or restates another total or interval, is refused", () => {
  const { receipt, events, p } = interval();
  const cases: [Partial<PredicateInput>, string][] = [
    [{ energy: { ...p.energy, provenance: "measured" } }, "ReceiptMismatch"],
    [{ energy: { ...p.energy, provenance: "attributed" } }, "ReceiptMismatch"],
    [{ energy: { ...p.energy, total_uj: "1" } }, "ReceiptMismatch"],
    [{ energy: { ...p.energy, receipt: d("other") } }, "ReceiptMismatch"],
    [{ interval: { start_ms: 1000, end_ms: 1401 } }, "ReceiptMismatch"],
    [{ grants_id: d("other-grants") }, "GrantsMismatch"],
    [{ journal: { ...p.journal, events: 3 } }, "JournalMismatch"],
  ];
  for (const [i, [over, c]] of cases.entries())
    assert.throws(
      () => verifyInterval(attest({ ...p, ...over }, host), { receipt, events }),
      code(c),
      `case ${i}`,
    );
});

test("a receipt of another unit, by another host, or altered journal events are refused", () => {
  const other = interval({}, d("other-unit"));
  const { events, p } = interval({ energy: { ...other.p.energy } });
  assert.throws(
    () => verifyInterval(attest(p, host), { receipt: other.receipt, events }),
    code("UnitMismatch"),
  );
  const mine = interval();
  const byOther = attest(mine.p, testKey("host-2"));
  assert.throws(
    () => verifyInterval(byOther, { receipt: mine.receipt, events: mine.events }),
    code("UnknownSigner"),
  );
  const edited = [mine.events[0]!, { ...(mine.events[1] as object), code: 1 } as Json];
  assert.throws(
    () => verifyInterval(attest(mine.p, host), { receipt: mine.receipt, events: edited }),
    code("JournalMismatch"),
  );
});
