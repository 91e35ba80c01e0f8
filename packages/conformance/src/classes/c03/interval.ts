// C3: an attestation verified against the objects it binds (§7.5): its signed energy receipt and its
// journal's events. A predicate that overstates provenance or restates another figure is refused.
import { envelopeAddress, type Envelope, type Json, type JsonObject } from "@sbx/wire";
import { verifyInterval, type PredicateInput } from "@sbx/sandbox-attest/attestation";
import { estimateCpu, makeReceipt, measure, startEnergyChain } from "@sbx/sandbox-attest/energy";
import { Journal } from "@sbx/sandbox-attest/journal";
import { errCase, okCase } from "../../generate/build.ts";
import { key } from "../../generate/keys.ts";
import type { Handler, Vector } from "../../types.ts";
import { C, attest, d, host, predicate, unit } from "./fixture.ts";
import { unitId } from "@sbx/sandbox-attest/unit";

export const OP = "attestation.verify_interval";

/** verifyIntervalOp is the handler: {envelope, receipt, events?} → {address, receipt}. */
export const verifyIntervalOp: Handler = (i) => {
  const o = i as JsonObject;
  const v = verifyInterval(o.envelope, {
    receipt: o.receipt,
    ...(Array.isArray(o.events) ? { events: o.events } : {}),
  });
  return { address: v.attestation.address, receipt: v.receipt.address };
};

function journal(exitCode: number): Json[] {
  const j = new Journal();
  j.append({ type: "process.start", pid: 41, argv: ["make", "test"], binary: d("make") });
  j.append({ type: "stdio.chunk", stream: "stdout", digest: d("out-0"), length: "4096" });
  j.append({ type: "process.exit", pid: 41, code: exitCode, signal: null });
  return j.events as unknown as Json[];
}

/** interval builds a receipt (a GPU figure measured, CPU estimated), a journal, and their predicate. */
function interval(receiptKey = host, unitOf = unitId(unit)) {
  const components = [
    estimateCpu(1_500_000n, { source: "cgroup2:cpu.stat" }),
    measure("gpu", "nvml:0", 9_000_000n),
  ];
  const made = makeReceipt(
    startEnergyChain(unitOf, d("grants")),
    { start_ms: 1_767_225_600_000, end_ms: 1_767_225_603_250, components, absent: ["rapl"] },
    receiptKey,
  );
  const events = journal(0);
  const head = Journal.from(events).head();
  const p: PredicateInput = {
    ...predicate(),
    energy: {
      receipt: envelopeAddress(made.envelope),
      total_uj: made.receipt.total_uj,
      provenance: "estimated",
    },
    journal: { root: head.root, events: head.size },
  };
  return { receipt: made.envelope, events, p };
}

const input = (env: Envelope, receipt: Envelope, events?: Json[]): Json => ({
  envelope: env as unknown as Json,
  receipt: receipt as unknown as Json,
  ...(events ? { events } : {}),
});

/** intervalVectors: valid intervals and each restated figure broken. */
export function intervalVectors(): Vector[] {
  const { receipt, events, p } = interval();
  const ok = attest(p, host);
  const out: Vector[] = [
    okCase(C, "c3-interval-valid", "attestation, receipt and journal agree", OP, input(ok, receipt, events), {
      address: envelopeAddress(ok),
      receipt: envelopeAddress(receipt),
    }),
    okCase(C, "c3-interval-no-events", "receipt checked, journal not given", OP, input(ok, receipt), {
      address: envelopeAddress(ok),
      receipt: envelopeAddress(receipt),
    }),
  ];
  const broken: [string, string, Partial<PredicateInput>, string][] = [
    [
      "overstated-measured",
      "receipt has an estimated component; predicate says measured",
      { energy: { ...p.energy, provenance: "measured" } },
      "ReceiptMismatch",
    ],
    [
      "overstated-attributed",
      "predicate says attributed",
      { energy: { ...p.energy, provenance: "attributed" } },
      "ReceiptMismatch",
    ],
    [
      "total",
      "predicate restates another total",
      { energy: { ...p.energy, total_uj: "10500001" } },
      "ReceiptMismatch",
    ],
    [
      "receipt-address",
      "predicate binds another receipt",
      { energy: { ...p.energy, receipt: d("other-receipt") } },
      "ReceiptMismatch",
    ],
    [
      "interval",
      "predicate's interval differs from the receipt's",
      { interval: { start_ms: 1_767_225_600_000, end_ms: 1_767_225_603_251 } },
      "ReceiptMismatch",
    ],
    ["grants", "predicate under another grant set", { grants_id: d("other-grants") }, "GrantsMismatch"],
    [
      "journal-size",
      "predicate states another event count",
      { journal: { ...p.journal, events: 4 } },
      "JournalMismatch",
    ],
  ];
  for (const [id, desc, over, code] of broken)
    out.push(
      errCase(
        C,
        `c3-interval-${id}`,
        desc,
        OP,
        input(attest({ ...p, ...over }, host), receipt, events),
        code,
      ),
    );
  out.push(
    errCase(
      C,
      "c3-interval-event-edited",
      "the journal's exit code edited",
      OP,
      input(ok, receipt, journal(1)),
      "JournalMismatch",
    ),
  );
  const foreign = interval(key("host-2"));
  out.push(
    errCase(
      C,
      "c3-interval-receipt-other-host",
      "receipt signed by another host",
      OP,
      input(attest(foreign.p, host), foreign.receipt, events),
      "UnknownSigner",
    ),
  );
  const otherUnit = interval(host, d("other-unit"));
  out.push(
    errCase(
      C,
      "c3-interval-receipt-other-unit",
      "receipt of another unit",
      OP,
      input(attest(otherUnit.p, host), otherUnit.receipt, events),
      "UnitMismatch",
    ),
    errCase(
      C,
      "c3-interval-other-unit-unbound",
      "receipt of another unit that the attestation does not bind by address: ReceiptMismatch, the address is compared first (§7.5)",
      OP,
      input(ok, otherUnit.receipt, events),
      "ReceiptMismatch",
    ),
    errCase(
      C,
      "c3-interval-grants-unbound",
      "predicate under another grant set, binding another receipt address: ReceiptMismatch before GrantsMismatch (§7.5)",
      OP,
      input(
        attest(
          { ...p, grants_id: d("other-grants"), energy: { ...p.energy, receipt: d("other-receipt") } },
          host,
        ),
        receipt,
        events,
      ),
      "ReceiptMismatch",
    ),
  );
  return out;
}
