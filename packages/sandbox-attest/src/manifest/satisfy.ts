// §14.7 Satisfaction: whether the environment a host offers is the one a manifest address names.
// §13's resumption check calls this with the manifest address recorded at suspension.
import { addressOf, type Digest, type Json } from "@sbx/wire";
import { parsePinnedImage } from "./image.ts";
import type { Manifest, ManifestEnvironment } from "./types.ts";

/** What a host offers: its GPU, or null when it has none. */
export interface GpuOffer {
  readonly cores: number;
  readonly memory_bytes: string;
}

/** The resources a host offers a unit (byte counts as decimal strings). */
export interface HostOffer {
  readonly cpus: number;
  readonly memory_bytes: string;
  readonly storage_bytes: string;
  readonly gpu: GpuOffer | null;
}

/**
 * An offered environment (§14.7): what the host will actually run the unit in. `image` is the
 * reference the host resolved (`name@sha256:<hex>` or bare `sha256:<hex>`; compared by digest only,
 * so a mirror's name does not matter); `env` is every variable the host sets (null: unsets) on top of
 * the image; `user` the user it runs the unit as (null: the image's own user).
 */
export interface OfferedEnvironment {
  readonly image: string;
  readonly env: Readonly<Record<string, string | null>>;
  readonly user: string | null;
  readonly workspace_folder: string;
  readonly host: HostOffer;
}

/** One way an offer falls short: a pointer into the manifest's environment, what it wants, what was offered. */
export interface Mismatch {
  readonly pointer: string;
  readonly want: Json;
  readonly got: Json;
}

/** The answer of satisfies: ok, or the code and every mismatch. */
export type Satisfaction =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly code: "ManifestMismatch" | "EnvironmentMismatch";
      readonly mismatches: readonly Mismatch[];
    };

function imageDigest(ref: string): string | null {
  const bare = /^sha256:([0-9a-f]{64})$/.exec(ref);
  if (bare) return bare[1] ?? null;
  return parsePinnedImage(ref)?.sha256 ?? null;
}

function atLeast(want: string, got: string): boolean {
  return /^\d+$/.test(got) && BigInt(got) >= BigInt(want);
}

function envMismatches(want: ManifestEnvironment["env"], got: OfferedEnvironment["env"]): Mismatch[] {
  const keys = [...new Set([...Object.keys(want), ...Object.keys(got)])].sort();
  const out: Mismatch[] = [];
  for (const k of keys) {
    const w = Object.hasOwn(want, k) ? want[k] : undefined;
    const g = Object.hasOwn(got, k) ? got[k] : undefined;
    if (w !== g)
      out.push({
        pointer: `/env/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`,
        want: w ?? "(not set)",
        got: g ?? "(not set)",
      });
  }
  return out;
}

function hostMismatches(want: ManifestEnvironment["host_requirements"], got: HostOffer): Mismatch[] {
  const out: Mismatch[] = [];
  const p = "/host_requirements";
  if (!(got.cpus >= want.cpus)) out.push({ pointer: `${p}/cpus`, want: want.cpus, got: got.cpus });
  if (!atLeast(want.memory_bytes, got.memory_bytes))
    out.push({ pointer: `${p}/memory_bytes`, want: want.memory_bytes, got: got.memory_bytes });
  if (!atLeast(want.storage_bytes, got.storage_bytes))
    out.push({ pointer: `${p}/storage_bytes`, want: want.storage_bytes, got: got.storage_bytes });
  const g = want.gpu;
  if (g.mode !== "required") return out;
  if (got.gpu === null) out.push({ pointer: `${p}/gpu`, want: "required", got: null });
  else if (!(got.gpu.cores >= g.cores) || !atLeast(g.memory_bytes, got.gpu.memory_bytes))
    out.push({
      pointer: `${p}/gpu`,
      want: { cores: g.cores, memory_bytes: g.memory_bytes },
      got: { cores: got.gpu.cores, memory_bytes: got.gpu.memory_bytes },
    });
  return out;
}

/**
 * satisfies says whether `offered` satisfies `manifest` (§14.7). When `address` is given (the
 * manifest address a run record holds), the manifest must be the one it names: else
 * `ManifestMismatch`, as when the manifest's own address is not its environment's. Then the image
 * digest, env (exactly), user and workspace folder must equal the manifest's, and the host must offer
 * at least the required cpus, memory, storage and GPU: else `EnvironmentMismatch` listing every
 * mismatch. Init and port settings are provisioning instructions, not compared here.
 */
export function satisfies(manifest: Manifest, offered: OfferedEnvironment, address?: Digest): Satisfaction {
  const own = addressOf(manifest.environment);
  if (own !== manifest.address || (address !== undefined && address !== own))
    return {
      ok: false,
      code: "ManifestMismatch",
      mismatches: [{ pointer: "", want: address ?? manifest.address, got: own }],
    };
  const e = manifest.environment;
  const out: Mismatch[] = [];
  const want = parsePinnedImage(e.image)?.sha256 ?? null;
  if (want === null || imageDigest(offered.image) !== want)
    out.push({ pointer: "/image", want: e.image, got: offered.image });
  out.push(...envMismatches(e.env, offered.env));
  if (offered.user !== e.user) out.push({ pointer: "/user", want: e.user, got: offered.user });
  if (offered.workspace_folder !== e.workspace_folder)
    out.push({ pointer: "/workspace_folder", want: e.workspace_folder, got: offered.workspace_folder });
  out.push(...hostMismatches(e.host_requirements, offered.host));
  return out.length === 0 ? { ok: true } : { ok: false, code: "EnvironmentMismatch", mismatches: out };
}

/** offerFor is the offered environment that exactly meets `env`, on a host offering `host` (§14.7). */
export function offerFor(env: ManifestEnvironment, host: HostOffer): OfferedEnvironment {
  return {
    image: env.image,
    env: { ...env.env },
    user: env.user,
    workspace_folder: env.workspace_folder,
    host,
  };
}

/** The shape §13's resumption check asks for (runrecord EnvironmentCheck), with the last answer kept. */
export interface ManifestCheck {
  satisfies(address: Digest): boolean;
  /** The full answer of the last call (every mismatch), for the refusal message. */
  readonly last: Satisfaction | null;
}

/**
 * manifestCheck adapts satisfies to §13.4 (§14.7): `satisfies(address)` is true only when one of the
 * given verified manifests has that address and `offered` satisfies it. An address none of them has
 * is a `ManifestMismatch` (kept in `last`).
 */
export function manifestCheck(
  manifests: Manifest | readonly Manifest[],
  offered: OfferedEnvironment,
): ManifestCheck {
  const list: readonly Manifest[] = Array.isArray(manifests) ? manifests : [manifests as Manifest];
  let last: Satisfaction | null = null;
  return {
    get last() {
      return last;
    },
    satisfies(address: Digest): boolean {
      const m = list.find((x) => x.address === address);
      last =
        m === undefined
          ? { ok: false, code: "ManifestMismatch", mismatches: [{ pointer: "", want: address, got: null }] }
          : satisfies(m, offered, address);
      return last.ok;
    },
  };
}
