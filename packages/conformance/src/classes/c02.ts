// C2: energy receipts (sandbox-attest §6): models, provenance rules, signed receipts, receipt chains.
// Negative cases break valid receipts systematically: every leaf of a signed receipt changed with the
// signature kept, and changed and re-signed with the refusal §6 names for that field.
import {
  addressOf,
  chainHeads,
  pae,
  signBytes,
  signPayload,
  toBase64,
  utf8,
  type Envelope,
  type Json,
  type JsonObject,
} from "@sbx/wire";
import {
  ENERGY_CHAIN_TAG,
  ENERGY_RECEIPT_TYPE,
  assertComponent,
  attribute,
  energyGenesis,
  estimateCpu,
  estimateMemory,
  estimateStorage,
  makeReceipt,
  measure,
  openReceipt,
  startEnergyChain,
  verifyEnergyChain,
  weakestProvenance,
  type EnergyComponent,
  type EnergyReceipt,
  type MeterReading,
} from "@sbx/sandbox-attest/energy";
import { errCase, flipBase64Byte, flipHexByte, okCase } from "../generate/build.ts";
import { key } from "../generate/keys.ts";
import type { ConformanceClass, Handler, Vector } from "../types.ts";

const C = "C2" as const;
const UNIT = addressOf({ unit: "c2", argv: ["make", "test"] });
const GRANTS = addressOf({ grants: "c2" });
const OTHER_GRANTS = addressOf({ grants: "c2-other-run" });
const host = key("host");

function obj(input: Json): JsonObject {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new TypeError("input must be an object");
  return input;
}
const strs = (v: Json | undefined): string[] | undefined => (Array.isArray(v) ? v.map(String) : undefined);

const ops: Record<string, Handler> = {
  "energy.component.check": (i) => {
    const c = obj(i).component;
    assertComponent(c);
    return { uj: c.uj, provenance: c.provenance };
  },
  "energy.receipt.verify": (i) => {
    const o = obj(i);
    const hosts = strs(o.hosts);
    const r = openReceipt(o.envelope, hosts ? { hosts } : {});
    return {
      address: r.address,
      total_uj: r.receipt.total_uj,
      provenance: weakestProvenance(r.receipt.components),
    };
  },
  "energy.chain.genesis": (i) => ({
    head: energyGenesis(obj(i).unit_id as never, obj(i).grants_id as never),
  }),
  "energy.chain.verify": (i) => {
    const o = obj(i);
    const hosts = strs(o.hosts);
    const v = verifyEnergyChain(o.envelopes as Json[], {
      unit_id: o.unit_id as never,
      grants_id: o.grants_id as never,
      ...(hosts ? { hosts } : {}),
      ...(typeof o.head === "string" ? { head: o.head as never } : {}),
    });
    return { head: v.state.head, count: v.receipts.length, total_uj: v.total_uj };
  },
};

/** The fixed mixed reading: one figure of each provenance, and a warm-pool claim with its ledger ref. */
function mixed(): EnergyComponent[] {
  return [
    measure("gpu", "nvml:0", 1_500_000n),
    attribute("cpu", "rapl:package", 90_000_000n, {
      numerator: 250_000n,
      denominator: 1_000_000n,
      basis: "cpu_us cgroup2:cpu.stat / cgroup2:cpu.stat@root",
    }),
    estimateMemory(123_456_789n, { source: "proc:stat.rss" }),
    estimateStorage(3_600n, { source: "workspace" }),
    {
      ...estimateCpu(2_000_000n, {
        source: "pool:reserved",
        domain: "warmpool",
        coefficients: { min_uw_per_vcpu: 740_000, max_uw_per_vcpu: 3_500_000, utilisation_ppm: 0 },
      }),
      ref: addressOf({ pool: "claim" }),
    },
  ];
}
function reading(i: number, components: EnergyComponent[] = mixed()): MeterReading {
  return {
    start_ms: 1_764_000_000_000 + 1000 * i,
    end_ms: 1_764_000_000_000 + 1000 * i + 900,
    components,
    absent: i % 2 ? [] : ["rapl.dram"],
  };
}
function chain(n: number, grants = GRANTS): { envs: Envelope[]; receipts: EnergyReceipt[]; head: string } {
  let s = startEnergyChain(UNIT, grants);
  const envs: Envelope[] = [];
  const receipts: EnergyReceipt[] = [];
  for (let i = 0; i < n; i++) {
    const m = makeReceipt(s, reading(i), host);
    envs.push(m.envelope);
    receipts.push(m.receipt);
    s = m.state;
  }
  return { envs, receipts, head: s.head };
}
const J = (v: unknown): Json => JSON.parse(JSON.stringify(v)) as Json;
const chainInput = (envelopes: unknown[], extra: JsonObject = {}): Json =>
  J({ envelopes, unit_id: UNIT, grants_id: GRANTS, hosts: [host.did], ...extra });

function validVectors(): Vector[] {
  const { envs, receipts, head } = chain(4);
  const r0 = receipts[0]!;
  const estimated = makeReceipt(
    startEnergyChain(UNIT, GRANTS),
    {
      ...reading(0, [
        estimateCpu(325_006n, { source: "cgroup2:cpu.stat" }),
        estimateMemory(1_166_452n, { source: "proc:stat.rss" }),
      ]),
      absent: ["rapl"],
    },
    host,
  );
  const empty = makeReceipt(startEnergyChain(UNIT, GRANTS), reading(0, []), host);
  const heads = chainHeads(ENERGY_CHAIN_TAG, [UNIT, GRANTS], receipts);
  return [
    okCase(
      C,
      "c2-genesis",
      'head₀ = BLAKE3("sandbox.energy/1" ‖ unit_id ‖ grants_id)',
      "energy.chain.genesis",
      { unit_id: UNIT, grants_id: GRANTS },
      { head: heads[0]! },
    ),
    okCase(
      C,
      "c2-receipt-mixed",
      "a receipt with measured, attributed and estimated components",
      "energy.receipt.verify",
      J({ envelope: envs[0], hosts: [host.did] }),
      { address: addressOf(r0), total_uj: r0.total_uj, provenance: "estimated" },
    ),
    okCase(
      C,
      "c2-receipt-estimated",
      "a meter's fallback receipt: RAPL absent, CPU and memory estimated",
      "energy.receipt.verify",
      J({ envelope: estimated.envelope }),
      {
        address: addressOf(estimated.receipt),
        total_uj: estimated.receipt.total_uj,
        provenance: "estimated",
      },
    ),
    okCase(
      C,
      "c2-receipt-empty",
      "a receipt with no components totals zero",
      "energy.receipt.verify",
      J({ envelope: empty.envelope }),
      { address: addressOf(empty.receipt), total_uj: "0", provenance: "estimated" },
    ),
    okCase(
      C,
      "c2-chain-4",
      "a run's four receipts in order, ending at the stated head",
      "energy.chain.verify",
      chainInput(envs, { head }),
      { head, count: 4, total_uj: (BigInt(r0.total_uj) * 4n).toString() },
    ),
    okCase(C, "c2-chain-empty", "an empty chain stays at head₀", "energy.chain.verify", chainInput([]), {
      head: heads[0]!,
      count: 0,
      total_uj: "0",
    }),
  ];
}

function modelVectors(): Vector[] {
  const cpu = (us: bigint, u: number): EnergyComponent =>
    estimateCpu(us, {
      source: "t",
      coefficients: { min_uw_per_vcpu: 740_000, max_uw_per_vcpu: 3_500_000, utilisation_ppm: u },
    });
  const ok: [string, string, EnergyComponent, string][] = [
    ["cpu-full", "one CPU-second at full utilisation is 3.5 J", cpu(1_000_000n, 1_000_000), "3500000"],
    ["cpu-idle", "one vCPU-second at zero utilisation is 0.74 J", cpu(1_000_000n, 0), "740000"],
    ["cpu-half", "one vCPU-second at 50 % is 2.12 J", cpu(1_000_000n, 500_000), "2120000"],
    ["cpu-floor", "the figure is the floor of the exact rational", cpu(333n, 333_333), "552"],
    [
      "memory-gib-s",
      "one resident GiB-second is 0.392 J",
      estimateMemory(1_048_576_000n, { source: "t" }),
      "392000",
    ],
    [
      "storage-tib-h",
      "one stored TiB-hour is 1.2 Wh",
      estimateStorage(1_048_576n * 3600n, { source: "t" }),
      "4320000000",
    ],
    [
      "attributed",
      "90 J shared × 1/4 is 22.5 J",
      attribute("cpu", "rapl:package", 90_000_000n, { numerator: 1n, denominator: 4n, basis: "cpu_us" }),
      "22500000",
    ],
    [
      "attributed-floor",
      "attribution rounds down once",
      attribute("cpu", "rapl:package", 10n, { numerator: 1n, denominator: 3n, basis: "cpu_us" }),
      "3",
    ],
  ];
  return ok.map(([id, desc, c, uj]) =>
    okCase(C, `c2-model-${id}`, desc, "energy.component.check", J({ component: c }), {
      uj,
      provenance: c.provenance,
    }),
  );
}

/** The re-signed breaks of a receipt's fields, each with the code §6 gives it. */
function fieldBreaks(
  r: EnergyReceipt,
): [string, (p: Record<string, unknown>, cs: Record<string, unknown>[]) => void, string][] {
  const set =
    (i: number, k: string, v: unknown) => (_: Record<string, unknown>, cs: Record<string, unknown>[]) =>
      void (cs[i]![k] = v);
  const sub =
    (i: number, k: string, f: (o: Record<string, unknown>) => void) =>
    (_: Record<string, unknown>, cs: Record<string, unknown>[]) =>
      f(cs[i]![k] as Record<string, unknown>);
  const top = (k: string, v: unknown) => (p: Record<string, unknown>) => void (p[k] = v);
  return [
    ["unit_id", top("unit_id", addressOf({ unit: "other" })), "EnergyChainSplice"],
    ["grants_id", top("grants_id", OTHER_GRANTS), "EnergyChainSplice"],
    ["seq-ahead", top("seq", r.seq + 1), "EnergyChainGap"],
    ["seq-back", top("seq", r.seq - 1), "EnergyChainReorder"],
    ["prev", top("prev", `blake3:${flipHexByte(r.prev.slice(7), 0)}`), "EnergyChainSplice"],
    ["host", top("host", key("mallory").did), "ReceiptNotByHost"],
    ["start_ms-overlap", top("start_ms", r.start_ms - 500), "EnergyIntervalOverlap"],
    ["start_ms-after-end", top("start_ms", r.end_ms + 1), "EnergyBadInterval"],
    ["end_ms", top("end_ms", r.start_ms - 1), "EnergyBadInterval"],
    ["total_uj", top("total_uj", (BigInt(r.total_uj) + 1n).toString()), "EnergyTotalMismatch"],
    ["total_uj-number", top("total_uj", 5), "BadAmount"],
    ["absent-duplicate", top("absent", ["rapl", "rapl"]), "BadEnergyReceipt"],
    ["absent-unsorted", top("absent", ["rapl.dram", "rapl"]), "BadEnergyReceipt"],
    ["extra-member", top("note", "x"), "BadEnergyReceipt"],
    [
      "missing-member",
      (p) => {
        delete p.absent;
      },
      "BadEnergyReceipt",
    ],
    ["measured-uj", set(0, "uj", "1500001"), "EnergyTotalMismatch"],
    [
      "measured-with-ratio",
      set(0, "ratio", { numerator: "1", denominator: "2", basis: "x" }),
      "BadProvenance",
    ],
    ["domain", set(0, "domain", "network"), "BadComponent"],
    ["source-empty", set(0, "source", ""), "BadComponent"],
    ["provenance-unknown", set(0, "provenance", "guessed"), "BadProvenance"],
    ["provenance-upgraded", set(2, "provenance", "measured"), "BadProvenance"],
    ["attributed-uj", set(1, "uj", "22500001"), "AttributionMismatch"],
    ["attributed-shared", set(1, "shared_uj", "180000000"), "AttributionMismatch"],
    [
      "attributed-no-ratio",
      (_, cs) => {
        delete cs[1]!.ratio;
      },
      "BadProvenance",
    ],
    ["ratio-above-one", sub(1, "ratio", (o) => void (o.numerator = "1000001")), "RatioAboveOne"],
    [
      "ratio-zero-denominator",
      sub(1, "ratio", (o) => void Object.assign(o, { numerator: "0", denominator: "0" })),
      "BadRatio",
    ],
    ["ratio-numerator", sub(1, "ratio", (o) => void (o.numerator = "250004")), "AttributionMismatch"],
    [
      "ratio-no-basis",
      sub(1, "ratio", (o) => {
        delete o.basis;
      }),
      "BadRatio",
    ],
    ["estimated-uj", set(2, "uj", "1"), "EstimateMismatch"],
    [
      "estimated-no-model",
      (_, cs) => {
        delete cs[2]!.model;
      },
      "BadProvenance",
    ],
    [
      "estimated-no-coefficients",
      sub(2, "model", (o) => {
        delete o.coefficients;
      }),
      "BadProvenance",
    ],
    ["model-name", sub(2, "model", (o) => void (o.name = "watts-guess/1")), "UnknownModel"],
    ["model-input", sub(2, "model", (o) => void (o.inputs = { kib_ms: "246913578" })), "EstimateMismatch"],
    [
      "model-coefficient",
      sub(2, "model", (o) => void (o.coefficients = { uw_per_gib: 784_000 })),
      "EstimateMismatch",
    ],
    [
      "model-coefficient-extra",
      sub(2, "model", (o) => void (o.coefficients = { uw_per_gib: 392_000, pue: 1 })),
      "BadCoefficients",
    ],
    [
      "cpu-utilisation-above-one",
      sub(4, "model", (o) => void ((o.coefficients as Record<string, number>).utilisation_ppm = 1_000_001)),
      "BadCoefficients",
    ],
    ["ref", set(4, "ref", "sha256:00"), "BadComponent"],
  ];
}

function breakVectors(): Vector[] {
  const { envs, receipts } = chain(2);
  const [e0, e1] = envs as [Envelope, Envelope];
  const r1 = receipts[1]!;
  const out: Vector[] = [];
  // Changed with the signature kept: every leaf of the signed payload.
  const bytes = Buffer.from(e1.payload, "base64");
  for (let i = 0; i < bytes.length; i += 23)
    out.push(
      errCase(
        C,
        `c2-unsigned-byte-${i}`,
        `receipt payload byte ${i} flipped, signature kept`,
        "energy.receipt.verify",
        J({ envelope: { ...e1, payload: flipBase64Byte(e1.payload, i) } }),
        "BadSignature",
      ),
    );
  for (const [id, f, code] of fieldBreaks(r1)) {
    const p = J(r1) as Record<string, unknown>;
    f(p, p.components as Record<string, unknown>[]);
    const kept = { ...e1, payload: toBase64(utf8(JSON.stringify(p))) };
    out.push(
      errCase(
        C,
        `c2-unsigned-${id}`,
        `${id} changed, original signature kept`,
        "energy.chain.verify",
        chainInput([e0, kept]),
        "BadSignature",
      ),
    );
    out.push(
      errCase(
        C,
        `c2-resigned-${id}`,
        `${id} changed and re-signed by the host`,
        "energy.chain.verify",
        chainInput([e0, signPayload(ENERGY_RECEIPT_TYPE, p, host)]),
        code,
      ),
    );
  }
  return out;
}

function signerVectors(): Vector[] {
  const { envs, receipts } = chain(1);
  const e = envs[0]!;
  const sig = e.signatures[0]!;
  const mallory = key("mallory");
  // buildReceipt's member order is not JCS order: the plain JSON text is not canonical.
  const body = JSON.stringify(receipts[0]);
  return [
    errCase(
      C,
      "c2-wrong-key",
      "the receipt names the host but mallory signed it",
      "energy.receipt.verify",
      J({ envelope: signPayload(ENERGY_RECEIPT_TYPE, receipts[0], mallory) }),
      "ReceiptNotByHost",
    ),
    errCase(
      C,
      "c2-unnamed-host",
      "a host the verifier did not name",
      "energy.receipt.verify",
      J({ envelope: e, hosts: [mallory.did] }),
      "UnknownSigner",
    ),
    errCase(
      C,
      "c2-keyid-relabelled",
      "the host's signature relabelled with mallory's did",
      "energy.receipt.verify",
      J({ envelope: { ...e, signatures: [{ keyid: mallory.did, sig: sig.sig }] } }),
      "BadSignature",
    ),
    errCase(
      C,
      "c2-sig-bit",
      "a signature bit flipped",
      "energy.receipt.verify",
      J({ envelope: { ...e, signatures: [{ keyid: sig.keyid, sig: flipBase64Byte(sig.sig, 9) }] } }),
      "BadSignature",
    ),
    errCase(
      C,
      "c2-payload-type",
      "signed as another payload type",
      "energy.receipt.verify",
      J({ envelope: signPayload("application/vnd.sandbox-attest.manifest+json", receipts[0], host) }),
      "WrongPayloadType",
    ),
    errCase(
      C,
      "c2-not-canonical",
      "a correctly signed payload that is not in JCS form",
      "energy.receipt.verify",
      J({ envelope: signedRaw(body) }),
      "NotCanonical",
    ),
  ];
}

/** signedRaw signs bytes as they are (not canonicalised), for the non-canonical case. */
function signedRaw(body: string): Json {
  const raw = utf8(body);
  const sig = toBase64(signBytes(host, pae(ENERGY_RECEIPT_TYPE, raw)));
  return { payloadType: ENERGY_RECEIPT_TYPE, payload: toBase64(raw), signatures: [{ keyid: host.did, sig }] };
}

function chainVectors(): Vector[] {
  const { envs, head } = chain(5);
  const other = chain(5, OTHER_GRANTS).envs;
  const [a, b, c, d, e] = envs as [Envelope, Envelope, Envelope, Envelope, Envelope];
  const s0 = startEnergyChain(UNIT, GRANTS);
  const fork = makeReceipt(
    makeReceipt(s0, { ...reading(0), end_ms: reading(0).end_ms + 1 }, host).state,
    reading(1),
    host,
  ).envelope;
  const cases: [string, string, unknown[], JsonObject, string][] = [
    ["gap-middle", "the third of five receipts dropped", [a, b, d, e], {}, "EnergyChainGap"],
    ["gap-first", "the first receipt dropped", [b, c], {}, "EnergyChainGap"],
    ["reorder", "two receipts swapped", [a, c, b, d, e], {}, "EnergyChainReorder"],
    ["duplicate", "a receipt replayed", [a, b, b, c], {}, "EnergyChainReorder"],
    [
      "splice-other-run",
      "receipt 2 of another run (other grant set) spliced in",
      [a, b, other[2], d],
      {},
      "EnergyChainSplice",
    ],
    ["splice-fork", "receipt 1 of a fork of the same run", [a, fork], {}, "EnergyChainSplice"],
    ["other-run", "a whole chain verified against another run's ids", other, {}, "EnergyChainSplice"],
    ["truncated", "the last receipt dropped, head stated", [a, b, c, d], { head }, "EnergyChainHeadMismatch"],
  ];
  return cases.map(([id, desc, list, extra, code]) =>
    errCase(C, `c2-chain-${id}`, desc, "energy.chain.verify", chainInput(list, extra), code),
  );
}

export const klass: ConformanceClass = {
  id: C,
  title: "energy receipts",
  file: "core.json",
  ops,
  generate: () => [
    ...validVectors(),
    ...modelVectors(),
    ...breakVectors(),
    ...signerVectors(),
    ...chainVectors(),
  ],
};
