// §6.2 Provenance rules, checked on every component: each kind carries exactly what backs it, and
// any verifier recomputes attributed and estimated figures from what the component states.
import { formatAmount, isDigest, parseAmount, type Amount } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import { modelEnergy } from "./model.ts";
import {
  ENERGY_DOMAINS,
  PROVENANCES,
  type AttributedComponent,
  type EnergyComponent,
  type EnergyDomain,
  type Model,
  type Provenance,
  type Ratio,
} from "./types.ts";

const BASE_KEYS = ["domain", "uj", "provenance", "source", "ref"];
const KIND_KEYS: Record<Provenance, string[]> = {
  measured: [],
  attributed: ["shared_uj", "ratio"],
  estimated: ["model"],
};
const BACKING_KEYS = ["shared_uj", "ratio", "model"];
const MAX_SOURCE = 256;

type Rec = Record<string, unknown>;

function record(v: unknown, code: "BadComponent" | "BadRatio" | "BadProvenance", what: string): Rec {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new SandboxAttestError(code, `${what} is not an object`);
  return v as Rec;
}

function checkBacking(c: Rec, kind: Provenance): void {
  for (const k of BACKING_KEYS) {
    const wanted = KIND_KEYS[kind].includes(k);
    if (wanted && !(k in c)) throw new SandboxAttestError("BadProvenance", `${kind} figure without ${k}`);
    if (!wanted && k in c) throw new SandboxAttestError("BadProvenance", `${kind} figure carries ${k}`);
  }
  if (kind === "estimated") {
    const m = record(c.model, "BadProvenance", "model");
    if (Object.keys(m).sort().join(",") !== "coefficients,inputs,name")
      throw new SandboxAttestError("BadProvenance", "model is {name, inputs, coefficients}");
  }
  for (const k of Object.keys(c))
    if (!BASE_KEYS.includes(k) && !BACKING_KEYS.includes(k))
      throw new SandboxAttestError("BadComponent", `unknown member ${JSON.stringify(k)}`);
}

function checkBase(c: Rec): void {
  if (!ENERGY_DOMAINS.includes(c.domain as EnergyDomain))
    throw new SandboxAttestError("BadComponent", `domain ${String(c.domain)} is not one of §6.1`);
  parseAmount(c.uj);
  if (typeof c.source !== "string" || c.source.length === 0 || c.source.length > MAX_SOURCE)
    throw new SandboxAttestError("BadComponent", "source must be a string of 1 to 256 characters");
  if ("ref" in c && !isDigest(c.ref)) throw new SandboxAttestError("BadComponent", "ref is not a digest");
}

/**
 * checkRatio refuses a ratio that is not {numerator, denominator, basis} with amounts and a
 * non-empty basis, or has a zero denominator (`BadRatio`), and one above 1 (`RatioAboveOne`) (§6.2).
 * Returns numerator and denominator.
 */
export function checkRatio(v: unknown): [bigint, bigint] {
  const r = record(v, "BadRatio", "ratio");
  if (Object.keys(r).sort().join(",") !== "basis,denominator,numerator")
    throw new SandboxAttestError("BadRatio", "ratio is {numerator, denominator, basis}");
  if (typeof r.basis !== "string" || r.basis.length === 0 || r.basis.length > MAX_SOURCE)
    throw new SandboxAttestError("BadRatio", "ratio.basis must name what the two figures are");
  const n = parseAmount(r.numerator);
  const d = parseAmount(r.denominator);
  if (d === 0n) throw new SandboxAttestError("BadRatio", "ratio denominator is zero");
  if (n > d) throw new SandboxAttestError("RatioAboveOne", `ratio ${n}/${d} exceeds 1`);
  return [n, d];
}

/** attributedEnergy is ⌊shared × numerator / denominator⌋, the one rounding §6.2 allows. */
export function attributedEnergy(shared: bigint, numerator: bigint, denominator: bigint): bigint {
  return (shared * numerator) / denominator;
}

function checkFigure(c: Rec, kind: Provenance): void {
  const uj = parseAmount(c.uj);
  if (kind === "attributed") {
    const [n, d] = checkRatio(c.ratio);
    const want = attributedEnergy(parseAmount(c.shared_uj), n, d);
    if (want !== uj) throw new SandboxAttestError("AttributionMismatch", `uj ${uj}, want ${want}`);
  } else if (kind === "estimated") {
    const want = modelEnergy(c.model as Model);
    if (want !== uj) throw new SandboxAttestError("EstimateMismatch", `uj ${uj}, want ${want}`);
  }
}

/**
 * assertComponent checks one component of a receipt or reading (§6.1, §6.2): an object
 * (`BadComponent`) with a known domain, an amount, a source of 1–256 characters, an optional digest
 * `ref`, no unknown member (`BadComponent`), a known provenance carrying exactly its backing
 * (`BadProvenance`: an estimated figure without a model or coefficients, an attributed one without
 * a ratio, a measured one with either), a well-formed ratio ≤ 1 (`BadRatio`, `RatioAboveOne`), a
 * known model (`UnknownModel`, `BadCoefficients`), and a figure equal to what its ratio or model
 * gives (`AttributionMismatch`, `EstimateMismatch`).
 */
export function assertComponent(v: unknown): asserts v is EnergyComponent {
  const c = record(v, "BadComponent", "component");
  const kind = c.provenance as Provenance;
  if (!PROVENANCES.includes(kind))
    throw new SandboxAttestError("BadProvenance", `provenance ${String(c.provenance)} is not one of §6.2`);
  checkBacking(c, kind);
  checkBase(c);
  checkFigure(c, kind);
}

/**
 * attribute splits a shared counter's delta by a ratio (§6.2): uj = ⌊shared_uj × n / d⌋. Refuses a
 * ratio above 1 (`RatioAboveOne`) or with a zero denominator (`BadRatio`).
 */
export function attribute(
  domain: EnergyDomain,
  source: string,
  sharedUj: bigint,
  ratio: { readonly numerator: bigint; readonly denominator: bigint; readonly basis: string },
): AttributedComponent {
  const r: Ratio = {
    numerator: formatAmount(ratio.numerator),
    denominator: formatAmount(ratio.denominator),
    basis: ratio.basis,
  };
  const [n, d] = checkRatio(r);
  const uj: Amount = formatAmount(attributedEnergy(sharedUj, n, d));
  return { domain, uj, provenance: "attributed", source, shared_uj: formatAmount(sharedUj), ratio: r };
}

/** measure wraps a counter reading that belongs to the unit alone as a measured component (§6.2). */
export function measure(domain: EnergyDomain, source: string, uj: bigint): EnergyComponent {
  return { domain, uj: formatAmount(uj), provenance: "measured", source };
}

/**
 * weakestProvenance is the provenance of a sum (§6.2): measured only if every part is measured,
 * estimated if any part is estimated, attributed otherwise. An empty sum is estimated: no counter
 * was read, so nothing may be called measured.
 */
export function weakestProvenance(parts: readonly { readonly provenance: Provenance }[]): Provenance {
  let worst = parts.length === 0 ? 2 : 0;
  for (const p of parts) worst = Math.max(worst, PROVENANCES.indexOf(p.provenance));
  return PROVENANCES[worst] ?? "estimated";
}

/** figureOf sums components into the simplest form `{uj, provenance}` (§6.2), e.g. for idle energy (§13). */
export function figureOf(parts: readonly EnergyComponent[]): { uj: Amount; provenance: Provenance } {
  let sum = 0n;
  for (const p of parts) sum += parseAmount(p.uj);
  return { uj: formatAmount(sum), provenance: weakestProvenance(parts) };
}
