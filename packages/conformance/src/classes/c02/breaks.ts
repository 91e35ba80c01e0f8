// C2 breaks: every field of a signed receipt changed, once with the signature kept and once
// re-signed by the host, each re-signed break with the code §6 gives it.
import { addressOf, signPayload, toBase64, utf8, type Envelope } from "@sbx/wire";
import { ENERGY_RECEIPT_TYPE, type EnergyReceipt } from "@sbx/sandbox-attest/energy";
import { errCase, flipBase64Byte, flipHexByte } from "../../generate/build.ts";
import { key } from "../../generate/keys.ts";
import type { Vector } from "../../types.ts";
import { C, J, OTHER_GRANTS, chain, chainInput, host } from "./fixtures.ts";

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
    // §6.1 item 6: a receipt without total_uj fails the member set, before any component or amount.
    [
      "missing-total_uj",
      (p) => {
        delete p.total_uj;
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

export function breakVectors(): Vector[] {
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
