// C9: warm pools (§15). Valid ledgers (open, closed, a claim priced into its run's first receipt);
// ledgers broken by a dishonest writer: a claim without its accrued energy, an eviction recorded as
// zero, a double claim, energy drawn after attribution, gaps, a close with items left, totals that
// do not add up, and chain breaks. Expected codes are stated here by construction.
import {
  addressOf,
  chainNext,
  payloadOf,
  signPayload,
  type Digest,
  type Json,
  type JsonObject,
  type KeyPair,
} from "@sbx/wire";
import {
  buildReceipt,
  energyGenesis,
  estimateCpu,
  estimateMemory,
  estimateStorage,
} from "@sbx/sandbox-attest/energy";
import {
  appendEntry,
  checkChargeOf,
  claimBody,
  claimComponents,
  closeBody,
  createPool,
  evictBody,
  POOL_ENTRY_PAYLOAD_TYPE,
  POOL_PAYLOAD_TYPE,
  replayLedger,
  verifyLedger,
  type ClaimedEntry,
  type LedgerState,
} from "@sbx/sandbox-attest/warmpool";
import { errCase, okCase } from "../generate/build.ts";
import { key } from "../generate/keys.ts";
import type { ConformanceClass, Handler, Vector } from "../types.ts";
import { str, strings } from "./input.ts";

const C = "C9" as const;
const host = key("host");
const manifest: Digest = addressOf({ manifest: "c9" });
const unit: Digest = addressOf({ unit: "c9" });
const grants: Digest = addressOf({ grants: "c9" });
const T0 = 1_700_000_000_000;

const ops: Record<string, Handler> = {
  "warmpool.verify": (i) => {
    const o = i as JsonObject;
    const hosts = Array.isArray(o.hosts) ? o.hosts.map(String) : undefined;
    const s = verifyLedger(o.ledger, {
      requireClosed: o.require_closed === true,
      ...(hosts ? { hosts } : {}),
    });
    return { ...s, claims: s.claims.map((c) => addressOf(c)) };
  },
  // §15.4: the ledger (verified as warmpool.verify does), the claim entry by its address, and the
  // run's first receipt payload; the receipt must carry a copy of every component the item drew.
  "warmpool.claim_charged": (i) => {
    const o = i as JsonObject;
    const s = replayLedger(o.ledger, { hosts: strings(o.hosts, "hosts") });
    checkChargeOf(s, str(o.claim, "claim"), o.receipt);
    return null;
  },
};

const cpu = (us: bigint) => [estimateCpu(us, { source: "proc:self/stat" })];
const idle = (ms: number) => [
  estimateMemory(2048n * BigInt(ms), { source: "proc:status VmRSS" }),
  estimateStorage(BigInt(ms) / 1000n, { source: "fs:workspace" }),
];

function accrue(s: LedgerState, item: string, to: number): LedgerState {
  const from = s.account.items.get(item)?.accounted_to_ms ?? to;
  appendEntry(s, { kind: "accrued", item, from_ms: from, to_ms: to, residency: idle(to - from) }, host);
  return s;
}

/** pool: a, b, c provisioned; a claimed at +10 s; b evicted at +20 s; with `close`, c evicted and the pool closed. */
function pool(close = false): LedgerState {
  const s = createPool({ name: "c9", manifest, created_ms: T0 }, host);
  for (const [i, item] of ["a", "b", "c"].entries())
    appendEntry(
      s,
      { kind: "provisioned", item, manifest, at_ms: T0 + i, provision: cpu(30_000n + BigInt(i)) },
      host,
    );
  appendEntry(s, claimBody(accrue(s, "a", T0 + 10_000), "a", unit, grants), host);
  appendEntry(s, evictBody(accrue(s, "b", T0 + 20_000), "b", "expired"), host);
  if (close) {
    appendEntry(s, evictBody(accrue(s, "c", T0 + 30_000), "c", "host-shutdown"), host);
    appendEntry(s, closeBody(s, T0 + 30_000), host);
  }
  return s;
}

function forge(s: LedgerState, body: Record<string, unknown>, k: KeyPair = host): LedgerState {
  const entry = { ...body, seq: s.entries.length, prev: s.head };
  s.entries.push(signPayload(POOL_ENTRY_PAYLOAD_TYPE, entry, k));
  s.head = chainNext(s.head, entry);
  return s;
}

const wire = (s: LedgerState): Json => ({ pool: s.pool, entries: [...s.entries] }) as unknown as Json;
const verifyInput = (s: LedgerState, extra: JsonObject = {}): Json => ({
  ledger: wire(s),
  hosts: [host.did],
  ...extra,
});

function validVectors(): Vector[] {
  const h = ops["warmpool.verify"] as Handler;
  const open = verifyInput(pool());
  const closed = verifyInput(pool(true), { require_closed: true });
  const empty = verifyInput(createPool({ name: "empty", manifest, created_ms: T0 }, host));
  return [
    okCase(
      C,
      "c9-ledger-open",
      "open ledger: one claimed, one evicted, one resident; drawn = claimed + evicted + outstanding",
      "warmpool.verify",
      open,
      h(open) as Json,
    ),
    okCase(
      C,
      "c9-ledger-closed",
      "closed ledger: every microjoule attributed to exactly one claim or eviction",
      "warmpool.verify",
      closed,
      h(closed) as Json,
    ),
    okCase(C, "c9-ledger-empty", "a pool with no entries", "warmpool.verify", empty, h(empty) as Json),
  ];
}

type Breaker = [id: string, desc: string, code: string, make: () => LedgerState];

function claimBreakers(): Breaker[] {
  const c = (s: LedgerState) => claimBody(accrue(s, "c", T0 + 30_000), "c", unit, grants);
  const e = (s: LedgerState) => evictBody(accrue(s, "c", T0 + 30_000), "c", "expired");
  return [
    [
      "claim-without-accrued",
      "a claim charging provisioning only, residency dropped",
      "AccruedMismatch",
      () => {
        const s = pool();
        const b = c(s);
        return forge(s, { ...b, accrued_uj: b.provision_uj, residency_uj: "0" });
      },
    ],
    [
      "claim-residency-not-charged",
      "a claim stating residency but charging provisioning only",
      "AccruedMismatch",
      () => {
        const s = pool();
        const b = c(s);
        return forge(s, { ...b, accrued_uj: b.provision_uj });
      },
    ],
    [
      "claim-zero",
      "a claim recorded as zero",
      "ZeroEnergy",
      () => {
        const s = pool();
        return forge(s, { ...c(s), accrued_uj: "0", provision_uj: "0", residency_uj: "0" });
      },
    ],
    [
      "claim-zero-total",
      "a claim whose total is zero while its parts are right: ZeroEnergy is checked before AccruedMismatch",
      "ZeroEnergy",
      () => {
        const s = pool();
        return forge(s, { ...c(s), accrued_uj: "0" });
      },
    ],
    [
      "claim-zero-with-gap",
      "a zero claim that also leaves residency unaccounted: ZeroEnergy is checked before AccrualGap",
      "ZeroEnergy",
      () => {
        const s = pool();
        return forge(s, {
          kind: "claimed",
          item: "c",
          at_ms: T0 + 40_000,
          unit,
          grants,
          accrued_uj: "0",
          provision_uj: "0",
          residency_uj: "0",
        });
      },
    ],
    [
      "evict-zero",
      "an eviction recorded as zero",
      "ZeroEnergy",
      () => {
        const s = pool();
        return forge(s, { ...e(s), overhead_uj: "0", provision_uj: "0", residency_uj: "0" });
      },
    ],
    [
      "evict-zero-total",
      "an eviction whose overhead is zero while its parts are right: ZeroEnergy before AccruedMismatch (§15.5)",
      "ZeroEnergy",
      () => {
        const s = pool();
        return forge(s, { ...e(s), overhead_uj: "0" });
      },
    ],
    [
      "evict-zero-with-gap",
      "a zero eviction that also leaves residency unaccounted: ZeroEnergy before AccrualGap (§15.5)",
      "ZeroEnergy",
      () => {
        const s = pool();
        return forge(s, {
          kind: "evicted",
          item: "c",
          at_ms: T0 + 40_000,
          reason: "expired",
          overhead_uj: "0",
          provision_uj: "0",
          residency_uj: "0",
        });
      },
    ],
    [
      "evict-residency-only",
      "an eviction recording residency as the whole overhead",
      "AccruedMismatch",
      () => {
        const s = pool();
        const b = e(s);
        return forge(s, { ...b, overhead_uj: b.residency_uj, provision_uj: "0" });
      },
    ],
    [
      "double-claim",
      "the same item claimed twice",
      "DoubleClaim",
      () => {
        const s = pool();
        const first = s.payloads.find((x) => x.kind === "claimed") as ClaimedEntry;
        return forge(s, { ...first, at_ms: T0 + 30_000 });
      },
    ],
    [
      "claim-after-evict",
      "an evicted item claimed",
      "DoubleClaim",
      () => {
        const s = pool();
        return forge(s, {
          kind: "claimed",
          item: "b",
          at_ms: T0 + 20_000,
          unit,
          grants,
          accrued_uj: "1",
          provision_uj: "1",
          residency_uj: "0",
        });
      },
    ],
    [
      "accrue-after-claim",
      "energy drawn after the claim: never attributed",
      "Unattributed",
      () =>
        forge(pool(), {
          kind: "accrued",
          item: "a",
          from_ms: T0 + 10_000,
          to_ms: T0 + 40_000,
          residency: idle(30_000),
        }),
    ],
    [
      "accrual-gap",
      "residency with an unaccounted gap",
      "AccrualGap",
      () =>
        forge(pool(), {
          kind: "accrued",
          item: "c",
          from_ms: T0 + 500,
          to_ms: T0 + 30_000,
          residency: idle(29_500),
        }),
    ],
    [
      "figure-component-before-domain",
      "a figure component in the warmpool domain whose amount is malformed: §6 codes before BadPoolEntry (§15.2)",
      "BadAmount",
      () =>
        forge(pool(), {
          kind: "accrued",
          item: "c",
          from_ms: T0,
          to_ms: T0 + 30_000,
          residency: [{ domain: "warmpool", uj: "1.5", provenance: "measured", source: "rapl:package" }],
        }),
    ],
    [
      "accrual-empty",
      "an accrual with to_ms = from_ms at the ledger's latest time: AccrualGap (§15.3)",
      "AccrualGap",
      () => {
        const s = accrue(pool(), "c", T0 + 20_000);
        return forge(s, {
          kind: "accrued",
          item: "c",
          from_ms: T0 + 20_000,
          to_ms: T0 + 20_000,
          residency: idle(0),
        });
      },
    ],
    [
      "accrual-reversed",
      "an accrual with to_ms before from_ms: TimeReversed, since its time precedes the entry before",
      "TimeReversed",
      () =>
        forge(pool(), {
          kind: "accrued",
          item: "c",
          from_ms: T0 + 2,
          to_ms: T0 + 1,
          residency: idle(1),
        }),
    ],
    [
      "claim-unknown",
      "a claim of an item never provisioned",
      "UnknownItem",
      () => {
        const s = pool();
        return forge(s, { ...c(s), item: "zz" });
      },
    ],
  ];
}

function ledgerBreakers(): Breaker[] {
  const closedWith = (t: Record<string, string>) => () => {
    const s = pool();
    appendEntry(s, evictBody(accrue(s, "c", T0 + 30_000), "c", "host-shutdown"), host);
    return forge(s, { ...closeBody(s, T0 + 30_000), ...t });
  };
  return [
    [
      "close-with-resident",
      "a close while an item is still resident",
      "Unattributed",
      () =>
        forge(pool(), {
          kind: "closed",
          at_ms: T0 + 30_000,
          drawn_uj: "1",
          claimed_uj: "1",
          evicted_uj: "0",
        }),
    ],
    [
      "close-drawn-short",
      "a close whose drawn total drops a microjoule",
      "ConservationViolated",
      () => {
        const s = pool();
        return closedWith({ drawn_uj: (s.account.drawn - 1n).toString() })();
      },
    ],
    [
      "close-evicted-zero",
      "a close stating evictions as zero",
      "ConservationViolated",
      closedWith({ evicted_uj: "0" }),
    ],
    [
      "provision-zero",
      "provisioning recorded as zero",
      "ZeroEnergy",
      () =>
        forge(pool(), { kind: "provisioned", item: "d", manifest, at_ms: T0 + 30_000, provision: cpu(0n) }),
    ],
    [
      "provision-twice",
      "an item provisioned twice",
      "DuplicateItem",
      () =>
        forge(pool(), { kind: "provisioned", item: "c", manifest, at_ms: T0 + 30_000, provision: cpu(9n) }),
    ],
    [
      "time-reversed",
      "an entry earlier than the one before",
      "TimeReversed",
      () => forge(pool(), { kind: "provisioned", item: "d", manifest, at_ms: T0, provision: cpu(9n) }),
    ],
    [
      "estimate-off",
      "an estimated figure that does not recompute from its model",
      "EstimateMismatch",
      () =>
        forge(pool(), {
          kind: "provisioned",
          item: "d",
          manifest,
          at_ms: T0 + 30_000,
          provision: [{ ...cpu(5_000n)[0], uj: "999999" }],
        }),
    ],
    [
      "after-close",
      "an entry after the pool closed",
      "PoolClosed",
      () =>
        forge(pool(true), {
          kind: "provisioned",
          item: "d",
          manifest,
          at_ms: T0 + 40_000,
          provision: cpu(9n),
        }),
    ],
    [
      "after-close-earlier",
      "an entry after close that is also earlier than the close: PoolClosed is checked before TimeReversed",
      "PoolClosed",
      () => forge(pool(true), { kind: "provisioned", item: "d", manifest, at_ms: T0, provision: cpu(9n) }),
    ],
    [
      "after-close-wrong-seq",
      "an entry after close with a seq that skips one: PoolChainBroken is checked before PoolClosed",
      "PoolChainBroken",
      () => {
        const s = pool(true);
        const entry = {
          kind: "provisioned",
          item: "d",
          manifest,
          at_ms: T0,
          provision: cpu(9n),
          seq: s.entries.length + 1,
          prev: s.head,
        };
        s.entries.push(signPayload(POOL_ENTRY_PAYLOAD_TYPE, entry, host));
        return s;
      },
    ],
    [
      "malformed-after-close",
      "an entry of the wrong shape after close: BadPoolEntry is checked before the chain and PoolClosed",
      "BadPoolEntry",
      () =>
        forge(pool(true), {
          kind: "provisioned",
          item: "d",
          manifest,
          at_ms: T0,
          provision: cpu(9n),
          note: "x",
        }),
    ],
    [
      "other-signer",
      "an entry signed by a key other than the pool's host",
      "UnknownSigner",
      () =>
        forge(
          pool(),
          { kind: "provisioned", item: "d", manifest, at_ms: T0 + 30_000, provision: cpu(9n) },
          key("mallory"),
        ),
    ],
  ];
}

function chainVectors(): Vector[] {
  const s = pool(true);
  const es = s.entries;
  const out: Vector[] = [];
  for (let i = 0; i < es.length; i++) {
    const dropped = { ...s, entries: es.filter((_, j) => j !== i) } as LedgerState;
    out.push(
      errCase(
        C,
        `c9-chain-drop-${i}`,
        `entry ${i} dropped from a closed ledger`,
        "warmpool.verify",
        verifyInput(dropped, { require_closed: true }),
        i === es.length - 1 ? "Unattributed" : "PoolChainBroken",
      ),
    );
  }
  for (let i = 0; i + 1 < es.length; i++) {
    const swapped = {
      ...s,
      entries: es.map((e, j) => (j === i ? es[i + 1] : j === i + 1 ? es[i] : e)),
    } as LedgerState;
    out.push(
      errCase(
        C,
        `c9-chain-swap-${i}`,
        `entries ${i} and ${i + 1} swapped`,
        "warmpool.verify",
        verifyInput(swapped, { require_closed: true }),
        "PoolChainBroken",
      ),
    );
  }
  return out;
}

function chargeVectors(): Vector[] {
  const s = pool();
  const claim = s.payloads.find((x) => x.kind === "claimed") as ClaimedEntry;
  const components = claimComponents(s, claim);
  const run = [estimateCpu(120_000n, { source: "cgroup2:cpu.stat" })];
  const receipt = buildReceipt({
    unit_id: unit,
    grants_id: grants,
    seq: 0,
    prev: energyGenesis(unit, grants),
    host: host.did,
    start_ms: T0 + 10_000,
    end_ms: T0 + 11_000,
    components: [...run, ...components],
  });
  const without = (cs: readonly unknown[]) =>
    buildReceipt({ ...receipt, components: cs as typeof components });
  const input = (r: JsonObject, c: string = addressOf(claim)): Json => ({
    ledger: wire(s),
    hosts: [host.did],
    claim: c,
    receipt: r,
  });
  const r = receipt as unknown as JsonObject;
  const ref = addressOf(claim);
  // One measured component with the claim's whole sum in place of the item's estimated ones.
  const laundered = without([
    ...run,
    { domain: "warmpool", uj: claim.accrued_uj, provenance: "measured", source: "rapl:package", ref },
  ]);
  const relabelled = without([...run, ...components.map((x) => ({ ...x, source: "rapl:package" }))]);
  const reordered = without([...run, ...components.slice(1), components[0]]);
  return [
    okCase(
      C,
      "c9-charge-first-receipt",
      "the claim's accrued energy appears as warmpool components of the run's first receipt",
      "warmpool.claim_charged",
      input(r),
      null,
    ),
    // §15.4: a `claim` that is not a digest names no claim entry: UnknownItem, after the receipt's form.
    errCase(
      C,
      "c9-charge-claim-not-digest",
      "the claim given as a string that is not a digest",
      "warmpool.claim_charged",
      input(r, "claim-1"),
      "UnknownItem",
    ),
    errCase(
      C,
      "c9-charge-later-receipt",
      "charged in the run's second receipt instead of its first",
      "warmpool.claim_charged",
      input({ ...r, seq: 1 }),
      "ClaimNotCharged",
    ),
    errCase(
      C,
      "c9-charge-missing-residency",
      "the receipt charges provisioning only",
      "warmpool.claim_charged",
      input(without([...run, ...components.slice(0, 1)]) as unknown as JsonObject),
      "ClaimNotCharged",
    ),
    errCase(
      C,
      "c9-charge-absent",
      "the run's first receipt without any warmpool component",
      "warmpool.claim_charged",
      input(without(run) as unknown as JsonObject),
      "ClaimNotCharged",
    ),
    errCase(
      C,
      "c9-charge-laundered",
      "one measured component with the claim's sum stands in for the item's estimated components",
      "warmpool.claim_charged",
      input(laundered as unknown as JsonObject),
      "ClaimNotCharged",
    ),
    errCase(
      C,
      "c9-charge-source-changed",
      "every component copied with its sum but another source named",
      "warmpool.claim_charged",
      input(relabelled as unknown as JsonObject),
      "ClaimNotCharged",
    ),
    errCase(
      C,
      "c9-charge-reordered",
      "the right copies in another order than the ledger's",
      "warmpool.claim_charged",
      input(reordered as unknown as JsonObject),
      "ClaimNotCharged",
    ),
    errCase(
      C,
      "c9-charge-claim-not-in-ledger",
      "a claim address that is no claim entry of the ledger",
      "warmpool.claim_charged",
      input(r, addressOf({ claim: "none" })),
      "UnknownItem",
    ),
    errCase(
      C,
      "c9-charge-untrusted-ledger",
      "a ledger whose host the verifier does not trust",
      "warmpool.claim_charged",
      { ...(input(r) as JsonObject), hosts: [key("mallory").did] },
      "UnknownSigner",
    ),
    // §15.7: the descriptor is opened (BadPoolEntry when not signed by its own host) before the
    // trusted hosts are consulted (UnknownSigner).
    errCase(
      C,
      "c9-descriptor-not-own-host-untrusted",
      "a descriptor naming the pool's host but signed by mallory, whom the verifier does not trust: BadPoolEntry first",
      "warmpool.verify",
      {
        ledger: { pool: signPayload(POOL_PAYLOAD_TYPE, payloadOf(s.pool), key("mallory")), entries: [] },
        hosts: [host.did],
      } as unknown as Json,
      "BadPoolEntry",
    ),
    errCase(
      C,
      "c9-charge-wrong-prev",
      "seq 0 of the claiming run, but prev is not the run's head₀: not its first receipt (§15.4)",
      "warmpool.claim_charged",
      input({ ...r, prev: addressOf({ prev: "other" }) }),
      "ClaimNotCharged",
    ),
    errCase(
      C,
      "c9-charge-run-component-lone-surrogate",
      "a lone surrogate in the run's own component (not a warmpool copy): §2.1 first (§15.4)",
      "warmpool.claim_charged",
      input({
        ...r,
        components: [{ ...run[0], source: "cgroup2:\ud800" }, ...components],
      } as unknown as JsonObject),
      "LoneSurrogate",
    ),
    errCase(
      C,
      "c9-charge-form-before-claim",
      "a receipt whose total is not its components' sum, for a claim not in the ledger: the form first (§15.4)",
      "warmpool.claim_charged",
      input({ ...r, total_uj: "1" }, addressOf({ claim: "none" })),
      "EnergyTotalMismatch",
    ),
    errCase(
      C,
      "c9-charge-other-run",
      "the components sit in another run's receipt",
      "warmpool.claim_charged",
      input({ ...r, grants_id: addressOf({ grants: "other" }) }),
      "ClaimNotCharged",
    ),
  ];
}

export const klass: ConformanceClass = {
  id: C,
  title: "warm pools",
  file: "durable.json",
  ops,
  generate: () => [
    ...validVectors(),
    ...[...claimBreakers(), ...ledgerBreakers()].map(([id, desc, code, make]) =>
      errCase(C, `c9-${id}`, desc, "warmpool.verify", verifyInput(make()), code),
    ),
    ...chainVectors(),
    ...chargeVectors(),
  ],
};
