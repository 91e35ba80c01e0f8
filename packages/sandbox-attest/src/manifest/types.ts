// §14.5 The manifest's shapes: the environment (what the manifest address names) and the signed
// manifest document around it.
import type { Digest } from "@sbx/wire";

/** The DSSE payload type of a signed manifest (§14.6). */
export const MANIFEST_PAYLOAD_TYPE = "application/vnd.sandbox-attest.manifest+json";
/** The `type` member of every manifest document (§14.5). */
export const MANIFEST_TYPE = "sandbox-attest.manifest/1";
/** The workspace folder when devcontainer.json names none (§14.3). */
export const DEFAULT_WORKSPACE_FOLDER = "/workspace";

/** Why a member is refused (§14.3); syntax errors use jsonc-parser's error names. */
export type MemberCode =
  | "LifecycleCommand"
  | "PrivilegeWidening"
  | "BuildOrCompose"
  | "FeatureInstall"
  | "HostSubstitution"
  | "UnknownSubstitution"
  | "ImageNotPinned"
  | "ImageMissing"
  | "UnknownMember"
  | "InvalidValue"
  | "DuplicateKey"
  | "ForbiddenKey"
  | "LoneSurrogate"
  | "TooDeep"
  | "NotAnObject"
  | "NotNormalised"
  | "AddressMismatch";

/** A GPU requirement: none, optional, or required with at least `cores` and `memory_bytes`. */
export interface GpuRequirement {
  readonly mode: "none" | "optional" | "required";
  readonly cores: number;
  readonly memory_bytes: string;
}

/** The least a host must offer (§14.3 hostRequirements, byte counts as decimal strings). */
export interface HostRequirements {
  readonly cpus: number;
  readonly memory_bytes: string;
  readonly storage_bytes: string;
  readonly gpu: GpuRequirement;
}

/** How a forwarded port is presented (§14.3 portsAttributes). */
export interface PortAttributes {
  readonly label: string;
  readonly protocol: "http" | "https" | null;
  readonly on_auto_forward:
    "notify" | "openBrowser" | "openBrowserOnce" | "openPreview" | "silent" | "ignore";
  readonly require_local_port: boolean;
}

/** The normalised environment: every default explicit; its content address is the manifest address. */
export interface ManifestEnvironment {
  /** `name@sha256:<64 hex>`, any tag dropped. */
  readonly image: string;
  /** containerEnv with remoteEnv applied over it; null unsets a variable the image sets. */
  readonly env: Readonly<Record<string, string | null>>;
  /** remoteUser, else containerUser, else null (the image's own user). */
  readonly user: string | null;
  readonly workspace_folder: string;
  readonly host_requirements: HostRequirements;
  readonly init: boolean;
  readonly forward_ports: readonly (number | string)[];
  readonly ports_attributes: Readonly<Record<string, PortAttributes>>;
  readonly other_ports_attributes: PortAttributes | null;
}

/** The manifest document that is signed (§14.5). */
export interface Manifest {
  readonly type: typeof MANIFEST_TYPE;
  /** addressOf(environment): what run records cite and satisfaction checks. */
  readonly address: Digest;
  /** The devcontainer.json `name`, a label outside the address; null when absent. */
  readonly name: string | null;
  readonly environment: ManifestEnvironment;
  /** The exact source bytes: BLAKE3 digest and length. */
  readonly source: { readonly digest: Digest; readonly size: number };
  /** JSON pointers of the members left out because they never configure the sandbox, sorted. */
  readonly ignored: readonly string[];
}
