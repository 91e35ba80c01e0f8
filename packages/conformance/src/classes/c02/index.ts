// C2: energy receipts (sandbox-attest §6): models, provenance rules, signed receipts, receipt chains.
// Negative cases break valid receipts systematically (./breaks.ts): every leaf of a signed receipt
// changed with the signature kept, and changed and re-signed with the refusal §6 names for it.
import {
  addressOf,
  chainHeads,
  payloadOf,
  signPayload,
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
  measure,
  energyGenesis,
  estimateCpu,
  estimateMemory,
  estimateStorage,
  makeReceipt,
  openReceipt,
  startEnergyChain,
  verifyEnergyChain,
  weakestProvenance,
  type EnergyComponent,
} from "@sbx/sandbox-attest/energy";
import { errCase, flipBase64Byte, okCase, signedRaw } from "../../generate/build.ts";
import { key } from "../../generate/keys.ts";
import type { ConformanceClass, Handler, Vector } from "../../types.ts";
import { obj, optionalStrings } from "../input.ts";
import { breakVectors } from "./breaks.ts";
import { C, GRANTS, J, OTHER_GRANTS, UNIT, chain, chainInput, host, reading } from "./fixtures.ts";

const ops: Record<string, Handler> = {
  "energy.component.check": (i) => {
    const c = obj(i).component;
    assertComponent(c);
    return { uj: c.uj, provenance: c.provenance };
  },
  "energy.receipt.verify": (i) => {
    const o = obj(i);
    const hosts = optionalStrings(o.hosts);
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
    const hosts = optionalStrings(o.hosts);
    const v = verifyEnergyChain(o.envelopes as Json[], {
      unit_id: o.unit_id as never,
      grants_id: o.grants_id as never,
      ...(hosts ? { hosts } : {}),
      ...(typeof o.head === "string" ? { head: o.head as never } : {}),
    });
    return { head: v.state.head, count: v.receipts.length, total_uj: v.total_uj };
  },
};

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
  // §6.2 item 4: the provenance of a sum is the weakest of its parts.
  const gpu = measure("gpu", "nvml:0", 9_000_000n);
  const share = attribute("cpu", "rapl:package", 90_000_000n, {
    numerator: 1n,
    denominator: 4n,
    basis: "cpu_us",
  });
  const measured = makeReceipt(startEnergyChain(UNIT, GRANTS), reading(0, [gpu]), host);
  const attributed = makeReceipt(startEnergyChain(UNIT, GRANTS), reading(0, [gpu, share]), host);
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
      "c2-receipt-measured",
      "every component measured: the sum is measured",
      "energy.receipt.verify",
      J({ envelope: measured.envelope }),
      { address: addressOf(measured.receipt), total_uj: "9000000", provenance: "measured" },
    ),
    okCase(
      C,
      "c2-receipt-attributed",
      "measured and attributed components, none estimated: the sum is attributed",
      "energy.receipt.verify",
      J({ envelope: attributed.envelope }),
      { address: addressOf(attributed.receipt), total_uj: "31500000", provenance: "attributed" },
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
  const out = ok.map(([id, desc, c, uj]) =>
    okCase(C, `c2-model-${id}`, desc, "energy.component.check", J({ component: c }), {
      uj,
      provenance: c.provenance,
    }),
  );
  // §6.2 item 5: a ratio that is not an object of exactly {numerator, denominator, basis}, or whose
  // basis is not a string of 1–256 characters, is BadRatio; its two figures are then amounts
  // (BadAmount), the denominator non-zero (BadRatio) and the ratio at most 1 (RatioAboveOne).
  const base = attribute("cpu", "rapl:package", 90_000_000n, {
    numerator: 1n,
    denominator: 4n,
    basis: "cpu_us",
  });
  const ratio = base.ratio as unknown as Record<string, unknown>;
  const bad: [string, unknown, string][] = [
    ["ratio-not-object", "1/4", "BadRatio"],
    ["ratio-extra-member", { ...ratio, unit: "us" }, "BadRatio"],
    ["ratio-missing-basis", { numerator: "1", denominator: "4" }, "BadRatio"],
    ["ratio-empty-basis", { ...ratio, basis: "" }, "BadRatio"],
    ["ratio-basis-257", { ...ratio, basis: "b".repeat(257) }, "BadRatio"],
    ["ratio-basis-not-string", { ...ratio, basis: 4 }, "BadRatio"],
    ["ratio-numerator-number", { ...ratio, numerator: 1 }, "BadAmount"],
    ["ratio-empty-basis-and-zero-denominator", { ...ratio, basis: "", denominator: "0" }, "BadRatio"],
    ["ratio-bad-amount-and-zero-denominator", { ...ratio, numerator: "01", denominator: "0" }, "BadAmount"],
  ];
  // §6.2 item 5: a model is exactly {name, inputs, coefficients}; another member is BadProvenance.
  const est = estimateMemory(1_048_576_000n, { source: "t" });
  out.push(
    errCase(
      C,
      "c2-component-model-extra-member",
      "an estimated component whose model carries a member beyond name, inputs and coefficients",
      "energy.component.check",
      J({ component: { ...est, model: { ...est.model, version: "1" } } }),
      "BadProvenance",
    ),
  );
  // §6.2 item 5: `uj` is required; a component without one has no amount there (BadAmount).
  const noUj = Object.fromEntries(Object.entries(est as unknown as JsonObject).filter(([k]) => k !== "uj"));
  out.push(
    errCase(
      C,
      "c2-component-missing-uj",
      "a component without uj: BadAmount (an amount is required there), not BadComponent",
      "energy.component.check",
      J({ component: noUj }),
      "BadAmount",
    ),
  );
  // §6.3 item 4: the inputs, like the coefficients, exactly as the table lists them, inputs
  // amounts (a malformed one `BadAmount`, §2.2) and coefficients JSON integers ≥ 0 (`BadCoefficients`); an exact
  // result above 2⁶⁴ − 1 equals no amount (`EstimateMismatch`).
  const m = est.model as unknown as JsonObject;
  const MAX = "18446744073709551615";
  const models: [string, string, JsonObject, string][] = [
    ["model-input-missing", "no input", { ...m, inputs: {} }, "BadCoefficients"],
    [
      "model-input-extra",
      "an input the model does not list",
      { ...m, inputs: { ...(m.inputs as JsonObject), vcpu_us: "1" } },
      "BadCoefficients",
    ],
    [
      "model-input-not-amount",
      "an input that is not an amount",
      { ...m, inputs: { kib_ms: "1.5" } },
      "BadAmount",
    ],
    ["model-input-number", "an input written as a JSON number", { ...m, inputs: { kib_ms: 5 } }, "BadAmount"],
    ["model-coefficient-missing", "no coefficient", { ...m, coefficients: {} }, "BadCoefficients"],
    [
      "model-coefficient-string",
      "a coefficient written as a string",
      { ...m, coefficients: { uw_per_gib: "392000" } },
      "BadCoefficients",
    ],
    [
      "model-coefficient-negative",
      "a negative coefficient",
      { ...m, coefficients: { uw_per_gib: -1 } },
      "BadCoefficients",
    ],
  ];
  for (const [id, desc, model, code] of models)
    out.push(
      errCase(
        C,
        `c2-component-${id}`,
        `an estimated component's model: ${desc}`,
        "energy.component.check",
        J({ component: { ...est, model } }),
        code,
      ),
    );
  out.push(
    errCase(
      C,
      "c2-component-model-result-above-2-64",
      "a model whose exact result exceeds 2^64 - 1: no amount equals it (EstimateMismatch)",
      "energy.component.check",
      J({
        component: {
          ...est,
          uj: MAX,
          model: { ...m, inputs: { kib_ms: MAX }, coefficients: { uw_per_gib: 2 ** 40 } },
        },
      }),
      "EstimateMismatch",
    ),
  );
  for (const [id, r, code] of bad)
    out.push(
      errCase(
        C,
        `c2-component-${id}`,
        `an attributed component whose ratio is refused: ${id}`,
        "energy.component.check",
        J({ component: { ...base, ratio: r } }),
        code,
      ),
    );
  // sandbox-attest §2.9: lengths in characters are UTF-16 code units. 128 characters above U+FFFF
  // are 256 units (accepted), 129 are 258 (refused); counted in code points both would be
  // accepted, counted in UTF-8 bytes both refused.
  const astral = (n: number) => "\u{1F600}".repeat(n);
  const b = base as unknown as JsonObject;
  const sized: [string, JsonObject, string | null][] = [
    ["source-utf16-256", { ...b, source: `rapl:x${astral(125)}` }, null],
    ["source-utf16-258", { ...b, source: `rapl:x${astral(126)}` }, "BadComponent"],
    ["basis-utf16-256", { ...b, ratio: { ...ratio, basis: astral(128) } }, null],
    ["basis-utf16-258", { ...b, ratio: { ...ratio, basis: astral(129) } }, "BadRatio"],
  ];
  for (const [id, c, code] of sized) {
    const desc = `a ${id.split("-")[0]!} of ${id.split("-")[2]!} UTF-16 code units, characters above U+FFFF`;
    out.push(
      code === null
        ? okCase(C, `c2-component-${id}`, desc, "energy.component.check", J({ component: c }), {
            uj: base.uj,
            provenance: base.provenance,
          })
        : errCase(C, `c2-component-${id}`, desc, "energy.component.check", J({ component: c }), code),
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
      J({ envelope: signedRaw(ENERGY_RECEIPT_TYPE, utf8(body), host) }),
      "NotCanonical",
    ),
    // §6.1 item 6: the components' sum is exact, so components summing above 2⁶⁴ − 1 can equal no
    // total_uj: EnergyTotalMismatch, not AmountOverflow (§2.2 would allow either reading).
    errCase(
      C,
      "c2-receipt-sum-above-2-64",
      "two measured components summing to 2⁶⁴, total_uj 1",
      "energy.receipt.verify",
      J({
        envelope: signPayload(
          ENERGY_RECEIPT_TYPE,
          {
            ...(receipts[0] as unknown as JsonObject),
            components: [
              { domain: "gpu", provenance: "measured", source: "nvml:0", uj: "18446744073709551615" },
              { domain: "cpu", provenance: "measured", source: "nvml:1", uj: "1" },
            ],
            total_uj: "1",
          },
          host,
        ),
        hosts: [host.did],
      }),
      "EnergyTotalMismatch",
    ),
  ];
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
    // §6.4 item 3: every receipt is opened before the walk, so a bad signature late in the list
    // wins over a splice, a gap and a reorder early in it.
    [
      "opened-before-walk",
      "receipt 1 of another run, then a receipt whose signature does not verify: BadSignature",
      [a, other[1], c, { ...e, signatures: [{ ...e.signatures[0]!, sig: d.signatures[0]!.sig }] }],
      {},
      "BadSignature",
    ],
    [
      "opened-before-walk-gap",
      "a gap first, then a receipt by an untrusted host: UnknownSigner",
      [b, c, signPayload(ENERGY_RECEIPT_TYPE, payloadOf(d), key("mallory"))],
      {},
      "UnknownSigner",
    ],
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
