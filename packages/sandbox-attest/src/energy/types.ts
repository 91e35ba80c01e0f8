// §6 Energy: the types every energy figure travels in. A figure is a decimal-string amount of
// microjoules (§2.2) with its provenance (§6.2) and the source, ratio or model that produced it (§6.3).
import type { Amount, Digest } from "@sbx/wire";

/** §6.2 How a figure was obtained: a counter of the unit's own, a shared counter split by a stated ratio, or a model. */
export type Provenance = "measured" | "attributed" | "estimated";

/** The provenances, strongest first (§6.2). */
export const PROVENANCES: readonly Provenance[] = ["measured", "attributed", "estimated"];

/** §6.1 The domains a receipt's components are split into. */
export type EnergyDomain = "cpu" | "memory" | "storage" | "gpu" | "idle" | "warmpool";

/** The domains, in the order the spec lists them (§6.1). */
export const ENERGY_DOMAINS: readonly EnergyDomain[] = [
  "cpu",
  "memory",
  "storage",
  "gpu",
  "idle",
  "warmpool",
];

/**
 * §6.3 An attribution ratio: the unit's share of a shared counter, numerator / denominator ≤ 1
 * (e.g. the unit's CPU time over the machine's CPU time in the same interval). `basis` names both.
 */
export interface Ratio {
  readonly numerator: Amount;
  readonly denominator: Amount;
  readonly basis: string;
}

/** §6.3 The models a verifier recomputes; a name outside this list is `UnknownModel`. */
export type ModelName = "ccf.cpu/1" | "ccf.memory/1" | "ccf.storage/1";

/** §6.3 ccf.cpu/1: power per vCPU from min to max watts at a stated utilisation (microwatts, ppm). */
export interface CpuCoefficients {
  readonly min_uw_per_vcpu: number;
  readonly max_uw_per_vcpu: number;
  readonly utilisation_ppm: number;
}
/** §6.3 ccf.memory/1: power per resident GiB (microwatts). */
export interface MemoryCoefficients {
  readonly uw_per_gib: number;
}
/** §6.3 ccf.storage/1: power per stored TiB (microwatts; 1.2 Wh per TiB-hour is 1 200 000 µW). */
export interface StorageCoefficients {
  readonly uw_per_tib: number;
}

/** §6.3 A model block: its name, the activity it was fed, and every coefficient it used. */
export type Model =
  | {
      readonly name: "ccf.cpu/1";
      readonly inputs: { readonly vcpu_us: Amount };
      readonly coefficients: CpuCoefficients;
    }
  | {
      readonly name: "ccf.memory/1";
      readonly inputs: { readonly kib_ms: Amount };
      readonly coefficients: MemoryCoefficients;
    }
  | {
      readonly name: "ccf.storage/1";
      readonly inputs: { readonly mib_s: Amount };
      readonly coefficients: StorageCoefficients;
    };

interface ComponentBase {
  readonly domain: EnergyDomain;
  readonly uj: Amount;
  /** The counter or activity source, e.g. "rapl:package", "cgroup2:cpu.stat", "proc:stat". */
  readonly source: string;
  /** Optional address of the record this figure comes from (e.g. a pool ledger entry, §15). */
  readonly ref?: Digest;
}

/** §6.2 A figure read from a counter that belongs to the unit alone. */
export interface MeasuredComponent extends ComponentBase {
  readonly provenance: "measured";
}
/** §6.2 A shared counter's delta (`shared_uj`) times a stated ratio; uj = ⌊shared_uj × n / d⌋. */
export interface AttributedComponent extends ComponentBase {
  readonly provenance: "attributed";
  readonly shared_uj: Amount;
  readonly ratio: Ratio;
}
/** §6.2 A figure computed by a named model from stated inputs and coefficients. */
export interface EstimatedComponent extends ComponentBase {
  readonly provenance: "estimated";
  readonly model: Model;
}

/** §6.1 One component of a receipt: a figure, its domain and its provenance. */
export type EnergyComponent = MeasuredComponent | AttributedComponent | EstimatedComponent;

/** The simplest form of a figure, `{uj, provenance}` (used e.g. by run records for idle energy, §13). */
export interface EnergyFigure {
  readonly uj: Amount;
  readonly provenance: Provenance;
}

/** §6.1 What a meter yields for one interval: its components and the sources it found absent. */
export interface MeterReading {
  readonly start_ms: number;
  readonly end_ms: number;
  readonly components: readonly EnergyComponent[];
  /** Sources looked for and not found (e.g. "rapl"), sorted; a fallback to a model says why. */
  readonly absent: readonly string[];
}

/** §6.1 The payload of an energy receipt (signed as ENERGY_RECEIPT_TYPE). */
export interface EnergyReceipt {
  readonly unit_id: Digest;
  readonly grants_id: Digest;
  /** Position in the run's receipt chain, from 0 (§6.4). */
  readonly seq: number;
  /** The chain head before this receipt: head₀ for the first (§6.4). */
  readonly prev: Digest;
  /** The did:key of the host that signs the receipt. */
  readonly host: string;
  readonly start_ms: number;
  readonly end_ms: number;
  readonly components: readonly EnergyComponent[];
  readonly total_uj: Amount;
  readonly absent: readonly string[];
}

/** §6.1 The DSSE payloadType of an energy receipt. */
export const ENERGY_RECEIPT_TYPE = "application/vnd.sandbox-attest.energy-receipt+json";

/** §6.4 The tag of the receipt chain: head₀ = BLAKE3(tag ‖ unit_id ‖ grants_id). */
export const ENERGY_CHAIN_TAG = "sandbox.energy/1";
