// §14 Environment manifests: devcontainer.json (JSONC) → a canonical, content-addressed, signed
// manifest of a declarative environment; verification; and satisfaction for §13's resumption check.
export { ingestManifest, signManifest, sortRefusals } from "./ingest.ts";
export { verifyManifest, checkManifest } from "./verify.ts";
export { satisfies, offerFor, manifestCheck } from "./satisfy.ts";
export { devcontainerOf } from "./environment.ts";
export { parsePinnedImage } from "./image.ts";
export { readJsonc, pointerOf, MAX_SOURCE_BYTES, MAX_DEPTH } from "./jsonc.ts";
export { classifyMember, KEPT_MEMBERS, IGNORED_MEMBERS, REFUSED_MEMBERS } from "./subset.ts";
export { classifySubstitution } from "./substitution.ts";
export { SandboxAttestError, isSandboxAttestError } from "../errors.ts";
export type { MemberRefusal, SandboxAttestErrorCode } from "../errors.ts";
export { MANIFEST_PAYLOAD_TYPE, MANIFEST_TYPE, DEFAULT_WORKSPACE_FOLDER } from "./types.ts";
export type {
  Manifest,
  ManifestEnvironment,
  HostRequirements,
  GpuRequirement,
  PortAttributes,
  MemberCode,
} from "./types.ts";
export type { VerifiedManifest } from "./verify.ts";
export type {
  OfferedEnvironment,
  HostOffer,
  GpuOffer,
  Satisfaction,
  Mismatch,
  ManifestCheck,
} from "./satisfy.ts";
export type { Offending, ReadResult } from "./jsonc.ts";
export type { MemberClass } from "./subset.ts";
export type { PinnedImage } from "./image.ts";
