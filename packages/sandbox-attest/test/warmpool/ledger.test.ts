// §15 Pool ledgers: a valid ledger verifies and conserves energy; a ledger that drops, double-claims
// or zeroes energy, or breaks its chain, is refused with the spec's code.
import assert from "node:assert/strict";
import { test } from "node:test";
import { addressOf, signPayload, testKey, formatAmount } from "@sbx/wire";
import {
  appendEntry,
  checkChargeOf,
  checkClaimCharged,
  claimBody,
  claimComponents,
  evictBody,
  figureUj,
  itemAttribution,
  replayLedger,
  verifyLedger,
  POOL_ENTRY_PAYLOAD_TYPE,
  type ClaimedEntry,
} from "@sbx/sandbox-attest/warmpool";
import { buildReceipt, energyGenesis, type EnergyReceipt } from "@sbx/sandbox-attest/energy";
import {
  forge,
  grants,
  host,
  ledgerOf,
  manifest,
  newPool,
  provisionFigure,
  residencyFigure,
  T0,
  unit,
  validPool,
} from "./shared.ts";

const refuses = (code: string) => (e: unknown) => (e as { code?: unknown }).code === code;

test("a valid ledger verifies and conserves: drawn = claimed + evicted + outstanding", () => {
  const sum = verifyLedger(ledgerOf(validPool()));
  assert.deepEqual(sum.items, { provisioned: 3, resident: 1, claimed: 1, evicted: 1 });
  assert.equal(
    BigInt(sum.drawn_uj),
    BigInt(sum.claimed_uj) + BigInt(sum.evicted_uj) + BigInt(sum.outstanding_uj),
  );
  assert.ok(
    BigInt(sum.claimed_uj) > BigInt(sum.claims[0]?.provision_uj ?? "0"),
    "the claim carries residency on top of provisioning",
  );
  const closed = verifyLedger(ledgerOf(validPool(true)), { requireClosed: true, hosts: [host.did] });
  assert.equal(closed.outstanding_uj, "0");
  assert.equal(closed.drawn_uj, formatAmount(BigInt(closed.claimed_uj) + BigInt(closed.evicted_uj)));
  assert.throws(() => verifyLedger(ledgerOf(validPool()), { requireClosed: true }), refuses("Unattributed"));
  assert.throws(
    () => verifyLedger(ledgerOf(validPool()), { hosts: [testKey("mallory").did] }),
    refuses("UnknownSigner"),
  );
});

test("a claim's joule price goes into the run's first receipt as warmpool components", () => {
  const s = validPool();
  const claim = s.payloads.find((e): e is ClaimedEntry => e.kind === "claimed");
  assert.ok(claim);
  const comps = claimComponents(s, claim);
  assert.ok(comps.every((c) => c.domain === "warmpool" && c.ref === addressOf(claim)));
  assert.equal(formatAmount(figureUj(comps)), claim.accrued_uj);
  const receipt: EnergyReceipt = buildReceipt({
    unit_id: unit,
    grants_id: grants,
    seq: 0,
    prev: energyGenesis(unit, grants),
    host: host.did,
    start_ms: T0,
    end_ms: T0 + 1,
    components: comps,
  });
  checkClaimCharged(s, claim, receipt);
  assert.throws(() => checkClaimCharged(s, claim, { ...receipt, seq: 1 }), refuses("ClaimNotCharged"));
  assert.throws(
    () => checkClaimCharged(s, claim, buildReceipt({ ...receipt, components: comps.slice(1) })),
    refuses("ClaimNotCharged"),
  );
  assert.throws(
    () => checkClaimCharged(s, claim, { ...receipt, grants_id: unit }),
    refuses("ClaimNotCharged"),
  );
  // §15.4: seq 0 alone does not make a receipt the run's first; its prev must be head₀.
  assert.throws(
    () => checkClaimCharged(s, claim, { ...receipt, prev: addressOf({ prev: "other" }) }),
    refuses("ClaimNotCharged"),
  );
  // §15.4: the receipt is a protocol object (§2.1) in every member, its own components included.
  const lone = { ...comps[0]!, domain: "cpu" as const, source: "cpu\ud800" };
  delete (lone as { ref?: string }).ref;
  assert.throws(
    () => checkClaimCharged(s, claim, { ...receipt, components: [lone, ...comps] }),
    refuses("LoneSurrogate"),
  );
  // §15.4: the receipt's form is checked before the claim's address.
  assert.throws(
    () => checkChargeOf(s, addressOf({ claim: "none" }), { ...receipt, total_uj: "1" }),
    refuses("EnergyTotalMismatch"),
  );
});

test("a claim is charged by copies of every component, not by a sum (no provenance laundering)", () => {
  const s = validPool();
  const claim = s.payloads.find((e): e is ClaimedEntry => e.kind === "claimed");
  assert.ok(claim);
  const comps = claimComponents(s, claim);
  assert.ok(comps.length > 1 && comps.every((c) => c.provenance === "estimated"));
  const base = {
    unit_id: unit,
    grants_id: grants,
    seq: 0,
    prev: energyGenesis(unit, grants),
    host: host.did,
    start_ms: T0,
    end_ms: T0 + 1,
  };
  // One measured component of the same sum stands in for the estimated ones: refused.
  const laundered = buildReceipt({
    ...base,
    components: [
      {
        domain: "warmpool",
        uj: claim.accrued_uj,
        provenance: "measured",
        source: "rapl:package",
        ref: addressOf(claim),
      },
    ],
  });
  assert.throws(() => checkClaimCharged(s, claim, laundered), refuses("ClaimNotCharged"));
  // The right copies in another order: refused (copies follow the ledger's order).
  const swapped = buildReceipt({ ...base, components: [...comps.slice(1), comps[0]!] });
  assert.throws(() => checkClaimCharged(s, claim, swapped), refuses("ClaimNotCharged"));
  // A claim that is not in the ledger: refused before the receipt is compared.
  assert.throws(
    () => checkClaimCharged(s, { ...claim, item: "zz" }, buildReceipt({ ...base, components: comps })),
    refuses("UnknownItem"),
  );
});

/** accrueC accounts item c's residency up to T0 + 30 s, as an honest writer does before attributing it. */
function accrueC(s: ReturnType<typeof newPool>): ReturnType<typeof newPool> {
  appendEntry(
    s,
    { kind: "accrued", item: "c", from_ms: T0 + 2, to_ms: T0 + 30_000, residency: residencyFigure(29_998) },
    host,
  );
  return s;
}

/** Broken ledgers, each made by a dishonest writer from the valid one, and the code each must get. */
const broken: [string, string, (s: ReturnType<typeof newPool>) => void][] = [
  [
    "claim without its accrued energy",
    "AccruedMismatch",
    (s) => {
      accrueC(s);
      const c = claimBody(s, "c", unit, grants);
      forge(s, { ...c, accrued_uj: c.provision_uj, residency_uj: "0" });
    },
  ],
  [
    "claim that states residency but charges provisioning only",
    "AccruedMismatch",
    (s) => {
      const c = claimBody(accrueC(s), "c", unit, grants);
      forge(s, { ...c, accrued_uj: c.provision_uj });
    },
  ],
  [
    "claim recorded as zero",
    "ZeroEnergy",
    (s) =>
      forge(s, {
        ...claimBody(accrueC(s), "c", unit, grants),
        accrued_uj: "0",
        provision_uj: "0",
        residency_uj: "0",
      }),
  ],
  [
    "eviction recorded as zero",
    "ZeroEnergy",
    (s) =>
      forge(s, {
        ...evictBody(accrueC(s), "c", "expired"),
        overhead_uj: "0",
        provision_uj: "0",
        residency_uj: "0",
      }),
  ],
  [
    "eviction recording only residency",
    "AccruedMismatch",
    (s) => {
      accrueC(s);
      const e = evictBody(s, "c", "expired");
      forge(s, { ...e, overhead_uj: e.residency_uj === "0" ? "1" : e.residency_uj, provision_uj: "0" });
    },
  ],
  [
    "double claim",
    "DoubleClaim",
    (s) => {
      const first = s.payloads.find((e) => e.kind === "claimed") as ClaimedEntry;
      forge(s, { ...first, at_ms: T0 + 30_000 });
    },
  ],
  [
    "evict an item already claimed",
    "DoubleClaim",
    (s) =>
      forge(s, {
        kind: "evicted",
        item: "a",
        at_ms: T0 + 30_000,
        reason: "expired",
        overhead_uj: "1",
        provision_uj: "1",
        residency_uj: "0",
      }),
  ],
  [
    "energy drawn after the claim (dropped)",
    "Unattributed",
    (s) =>
      forge(s, {
        kind: "accrued",
        item: "a",
        from_ms: T0 + 10_000,
        to_ms: T0 + 40_000,
        residency: residencyFigure(30_000),
      }),
  ],
  [
    "a gap in residency",
    "AccrualGap",
    (s) =>
      forge(s, {
        kind: "accrued",
        item: "c",
        from_ms: T0 + 500,
        to_ms: T0 + 30_000,
        residency: residencyFigure(29_500),
      }),
  ],
  [
    "a claim before residency is accounted to it",
    "AccrualGap",
    (s) => forge(s, { ...claimBody(s, "c", unit, grants), at_ms: T0 + 30_000 }),
  ],
  [
    "a close with an item still resident",
    "Unattributed",
    (s) => forge(s, { kind: "closed", at_ms: T0 + 30_000, drawn_uj: "1", claimed_uj: "1", evicted_uj: "0" }),
  ],
  [
    "provisioning recorded as zero",
    "ZeroEnergy",
    (s) =>
      forge(s, {
        kind: "provisioned",
        item: "d",
        manifest,
        at_ms: T0 + 30_000,
        provision: provisionFigure(0n),
      }),
  ],
  [
    "an item provisioned twice",
    "DuplicateItem",
    (s) =>
      forge(s, {
        kind: "provisioned",
        item: "c",
        manifest,
        at_ms: T0 + 30_000,
        provision: provisionFigure(5n),
      }),
  ],
  [
    "claim of an unknown item",
    "UnknownItem",
    (s) => forge(s, { ...claimBody(accrueC(s), "c", unit, grants), item: "zz" }),
  ],
  [
    "time running backwards",
    "TimeReversed",
    (s) => forge(s, { kind: "provisioned", item: "d", manifest, at_ms: T0, provision: provisionFigure(5n) }),
  ],
  [
    "an estimate that does not recompute",
    "EstimateMismatch",
    (s) =>
      forge(s, {
        kind: "provisioned",
        item: "d",
        manifest,
        at_ms: T0 + 30_000,
        provision: [{ ...provisionFigure(5_000n)[0], uj: "999999" }],
      }),
  ],
  [
    "an entry signed by another key",
    "UnknownSigner",
    (s) =>
      forge(
        s,
        { kind: "provisioned", item: "d", manifest, at_ms: T0 + 30_000, provision: provisionFigure(5n) },
        testKey("mallory"),
      ),
  ],
];

for (const [what, code, breakIt] of broken)
  test(`refused: ${what} (${code})`, () => {
    const s = validPool();
    breakIt(s);
    assert.throws(() => verifyLedger(ledgerOf(s)), refuses(code));
  });

test("chain breaks: a dropped, reordered or replaced entry, and anything after close", () => {
  const l = ledgerOf(validPool(true));
  const drop = { ...l, entries: l.entries.filter((_, i) => i !== 3) };
  const swap = { ...l, entries: [l.entries[1], l.entries[0], ...l.entries.slice(2)] };
  assert.throws(() => verifyLedger(drop), refuses("PoolChainBroken"));
  assert.throws(() => verifyLedger(swap), refuses("PoolChainBroken"));
  const s = validPool(true);
  forge(s, { kind: "provisioned", item: "d", manifest, at_ms: T0 + 40_000, provision: provisionFigure(5n) });
  assert.throws(() => verifyLedger(ledgerOf(s)), refuses("PoolClosed"));
  const replaced = signPayload(
    POOL_ENTRY_PAYLOAD_TYPE,
    { ...(s.payloads[0] as object), at_ms: T0 + 5 },
    host,
  );
  assert.throws(
    () => verifyLedger({ ...l, entries: [replaced, ...l.entries.slice(1)] }),
    refuses("PoolChainBroken"),
  );
});

test("the writer refuses what the verifier refuses, and a refused entry changes nothing", () => {
  const s = validPool();
  assert.throws(() => appendEntry(s, claimBody(s, "c", unit, grants), host), refuses("TimeReversed"));
  accrueC(s);
  const head = s.head;
  assert.throws(
    () => appendEntry(s, { ...claimBody(s, "c", unit, grants), accrued_uj: "1" }, host),
    refuses("AccruedMismatch"),
  );
  assert.throws(() => appendEntry(s, evictBody(s, "a", "expired"), host), refuses("DoubleClaim"));
  assert.throws(() => itemAttribution(s, "nope"), refuses("UnknownItem"));
  assert.equal(s.head, head);
  const again = replayLedger(ledgerOf(s));
  appendEntry(again, claimBody(again, "c", unit, grants), host);
  assert.equal(verifyLedger(ledgerOf(again)).items.claimed, 2);
});
