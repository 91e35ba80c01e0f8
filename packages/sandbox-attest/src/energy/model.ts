// §6.3 Models: Cloud Carbon Footprint-style estimates in exact integer arithmetic. Every input and
// coefficient is recorded in the component, so any verifier recomputes the figure to the microjoule.
import { formatAmount, parseAmount, type Amount } from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";
import type {
  CpuCoefficients,
  EnergyDomain,
  EstimatedComponent,
  MemoryCoefficients,
  Model,
  ModelName,
  StorageCoefficients,
} from "./types.ts";

/** §6.3 The model names this implementation recomputes. */
export const MODEL_NAMES: readonly ModelName[] = ["ccf.cpu/1", "ccf.memory/1", "ccf.storage/1"];

/** §6.3 Default coefficients (Cloud Carbon Footprint): 0.74–3.5 W per vCPU, 0.392 W per GiB, 1.2 Wh per TiB-hour. */
export const CCF_DEFAULTS: {
  readonly cpu: CpuCoefficients;
  readonly memory: MemoryCoefficients;
  readonly storage: StorageCoefficients;
} = {
  // CPU time a unit consumed is time of a busy vCPU: charged at full utilisation unless stated otherwise.
  cpu: { min_uw_per_vcpu: 740_000, max_uw_per_vcpu: 3_500_000, utilisation_ppm: 1_000_000 },
  memory: { uw_per_gib: 392_000 },
  storage: { uw_per_tib: 1_200_000 },
};

const E6 = 1_000_000n;
const KIB_PER_GIB = 1_048_576n;
const MIB_PER_TIB = 1_048_576n;

function coefficient(v: unknown, what: string): bigint {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
    throw new SandboxAttestError("BadCoefficients", `${what} must be a non-negative safe integer`);
  return BigInt(v);
}

function cpuEnergy(vcpuUs: bigint, c: CpuCoefficients): bigint {
  const min = coefficient(c.min_uw_per_vcpu, "min_uw_per_vcpu");
  const max = coefficient(c.max_uw_per_vcpu, "max_uw_per_vcpu");
  const u = coefficient(c.utilisation_ppm, "utilisation_ppm");
  if (min > max) throw new SandboxAttestError("BadCoefficients", `min ${min} µW above max ${max} µW`);
  if (u > E6) throw new SandboxAttestError("BadCoefficients", `utilisation ${u} ppm above 1 000 000`);
  // P(u) = min + u·(max − min); µs × µW = 10⁻⁶ µJ; u in ppm: one floor over the exact rational.
  return (vcpuUs * (min * E6 + u * (max - min))) / (E6 * E6);
}

function memoryEnergy(kibMs: bigint, c: MemoryCoefficients): bigint {
  // KiB·ms × µW/GiB ÷ (KiB per GiB × ms per s) = µJ.
  return (kibMs * coefficient(c.uw_per_gib, "uw_per_gib")) / (KIB_PER_GIB * 1000n);
}

function storageEnergy(mibS: bigint, c: StorageCoefficients): bigint {
  // MiB·s × µW/TiB ÷ MiB per TiB = µJ.
  return (mibS * coefficient(c.uw_per_tib, "uw_per_tib")) / MIB_PER_TIB;
}

function exactKeys(o: unknown, keys: readonly string[], what: string): void {
  if (typeof o !== "object" || o === null || Array.isArray(o))
    throw new SandboxAttestError("BadCoefficients", `${what} is not an object`);
  const got = Object.keys(o).sort().join(",");
  if (got !== [...keys].sort().join(","))
    throw new SandboxAttestError("BadCoefficients", `${what} has members ${got}, want ${keys.join(",")}`);
}

/**
 * modelEnergy recomputes the microjoules of a model block (§6.3). Refuses an unknown model name
 * (`UnknownModel`), inputs or coefficients with missing, extra or out-of-range members
 * (`BadCoefficients`), and a malformed input amount (wire `BadAmount`).
 */
export function modelEnergy(model: Model): bigint {
  const name = (model as { name: unknown }).name;
  const keys: Record<string, [string, string[]]> = {
    "ccf.cpu/1": ["vcpu_us", ["min_uw_per_vcpu", "max_uw_per_vcpu", "utilisation_ppm"]],
    "ccf.memory/1": ["kib_ms", ["uw_per_gib"]],
    "ccf.storage/1": ["mib_s", ["uw_per_tib"]],
  };
  const spec = typeof name === "string" ? keys[name] : undefined;
  if (spec === undefined) throw new SandboxAttestError("UnknownModel", `model ${String(name)} is not known`);
  exactKeys(model.inputs, [spec[0]], "model.inputs");
  exactKeys(model.coefficients, spec[1], "model.coefficients");
  switch (model.name) {
    case "ccf.cpu/1":
      return cpuEnergy(parseAmount(model.inputs.vcpu_us), model.coefficients);
    case "ccf.memory/1":
      return memoryEnergy(parseAmount(model.inputs.kib_ms), model.coefficients);
    case "ccf.storage/1":
      return storageEnergy(parseAmount(model.inputs.mib_s), model.coefficients);
  }
}

/** Options of the estimators: the source of the activity figure, and optionally domain and coefficients. */
export interface EstimateOptions<C> {
  readonly source: string;
  readonly domain?: EnergyDomain;
  readonly coefficients?: C;
}

function estimated(domain: EnergyDomain, source: string, model: Model): EstimatedComponent {
  return { domain, uj: formatAmount(modelEnergy(model)), provenance: "estimated", source, model };
}

/** estimateCpu turns vCPU-microseconds into an estimated component, model ccf.cpu/1 (§6.3). Refuses as modelEnergy does. */
export function estimateCpu(
  vcpuUs: bigint | Amount,
  o: EstimateOptions<CpuCoefficients>,
): EstimatedComponent {
  const inputs = { vcpu_us: formatAmount(BigInt(vcpuUs)) };
  return estimated(o.domain ?? "cpu", o.source, {
    name: "ccf.cpu/1",
    inputs,
    coefficients: o.coefficients ?? CCF_DEFAULTS.cpu,
  });
}

/** estimateMemory turns resident KiB-milliseconds into an estimated component, model ccf.memory/1 (§6.3). */
export function estimateMemory(
  kibMs: bigint | Amount,
  o: EstimateOptions<MemoryCoefficients>,
): EstimatedComponent {
  const inputs = { kib_ms: formatAmount(BigInt(kibMs)) };
  return estimated(o.domain ?? "memory", o.source, {
    name: "ccf.memory/1",
    inputs,
    coefficients: o.coefficients ?? CCF_DEFAULTS.memory,
  });
}

/** estimateStorage turns stored MiB-seconds into an estimated component, model ccf.storage/1 (§6.3). */
export function estimateStorage(
  mibS: bigint | Amount,
  o: EstimateOptions<StorageCoefficients>,
): EstimatedComponent {
  const inputs = { mib_s: formatAmount(BigInt(mibS)) };
  return estimated(o.domain ?? "storage", o.source, {
    name: "ccf.storage/1",
    inputs,
    coefficients: o.coefficients ?? CCF_DEFAULTS.storage,
  });
}

/** The activity of an interval in the units the models take: CPU, resident memory, stored bytes. */
export interface Activity {
  /** CPU time consumed (µs), or vCPU time reserved when charged at a stated utilisation. */
  readonly vcpu_us?: bigint;
  /** Resident memory integrated over time (KiB·ms). */
  readonly kib_ms?: bigint;
  /** Stored bytes integrated over time (MiB·s). */
  readonly mib_s?: bigint;
}

/**
 * estimateEnergy turns an interval's activity (CPU-seconds, resident GiB-seconds, stored TiB-hours,
 * in the integer units of Activity) into estimated cpu, memory and storage components, each with
 * its model and every coefficient recorded (§6.3). Terms absent from `activity` are left out.
 */
export function estimateEnergy(
  activity: Activity,
  source: { readonly cpu?: string; readonly memory?: string; readonly storage?: string },
  coefficients: Partial<typeof CCF_DEFAULTS> = {},
): EstimatedComponent[] {
  const out: EstimatedComponent[] = [];
  const src = (s: string | undefined, what: string): string => s ?? `activity:${what}`;
  const c = { ...CCF_DEFAULTS, ...coefficients };
  if (activity.vcpu_us !== undefined)
    out.push(estimateCpu(activity.vcpu_us, { source: src(source.cpu, "cpu"), coefficients: c.cpu }));
  if (activity.kib_ms !== undefined)
    out.push(
      estimateMemory(activity.kib_ms, { source: src(source.memory, "memory"), coefficients: c.memory }),
    );
  if (activity.mib_s !== undefined)
    out.push(
      estimateStorage(activity.mib_s, { source: src(source.storage, "storage"), coefficients: c.storage }),
    );
  return out;
}
