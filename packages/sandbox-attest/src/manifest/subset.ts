// §14.3 The declarative subset: every top-level devcontainer.json member is kept (it configures the
// environment), ignored (it configures only an editor or the devcontainer tool, and is listed), or
// refused with a stable code. A member in none of the lists is unknown and refused.
import type { MemberCode } from "./types.ts";

/** Members that configure the environment and are normalised into it (§14.3). */
export const KEPT_MEMBERS: readonly string[] = [
  "name",
  "image",
  "containerEnv",
  "remoteEnv",
  "containerUser",
  "remoteUser",
  "workspaceFolder",
  "hostRequirements",
  "init",
  "forwardPorts",
  "portsAttributes",
  "otherPortsAttributes",
  "overrideCommand",
  // Checked, never normalised: `false` (the default) is dropped, `true` refused (environment.ts).
  "privileged",
];

/**
 * Members left out of the environment and listed in the manifest as ignored (§14.3): editor
 * settings (`customizations`, and the legacy top-level `settings`, `extensions`, `devPort` the
 * devcontainers CLI moves under customizations.vscode), the editor's `$schema` hint, and behaviours of
 * the devcontainer tool that a sandbox never performs.
 */
export const IGNORED_MEMBERS: readonly string[] = [
  "customizations",
  "settings",
  "extensions",
  "devPort",
  "$schema",
  "shutdownAction",
  "updateRemoteUserUID",
  "userEnvProbe",
];

/** Members refused whatever their value, each with the reason's code (§14.3). */
export const REFUSED_MEMBERS: Readonly<Record<string, MemberCode>> = Object.assign(
  Object.create(null) as Record<string, MemberCode>,
  {
    // Lifecycle commands run arbitrary commands in (or before) the container.
    initializeCommand: "LifecycleCommand",
    onCreateCommand: "LifecycleCommand",
    updateContentCommand: "LifecycleCommand",
    postCreateCommand: "LifecycleCommand",
    postStartCommand: "LifecycleCommand",
    postAttachCommand: "LifecycleCommand",
    waitFor: "LifecycleCommand",
    // Widening: privileges, host paths, raw runtime arguments, published host ports. (`privileged`
    // is kept: only `true` widens, and environment.ts refuses it.)
    capAdd: "PrivilegeWidening",
    securityOpt: "PrivilegeWidening",
    runArgs: "PrivilegeWidening",
    mounts: "PrivilegeWidening",
    workspaceMount: "PrivilegeWidening",
    appPort: "PrivilegeWidening",
    // Builds and compose: the environment would be whatever a Dockerfile or compose file makes it.
    build: "BuildOrCompose",
    dockerFile: "BuildOrCompose",
    context: "BuildOrCompose",
    dockerComposeFile: "BuildOrCompose",
    service: "BuildOrCompose",
    runServices: "BuildOrCompose",
    // Features run install scripts as root.
    features: "FeatureInstall",
    overrideFeatureInstallOrder: "FeatureInstall",
  },
);

const KEPT = new Set(KEPT_MEMBERS);
const IGNORED = new Set(IGNORED_MEMBERS);

/** The class of one top-level member name (§14.3). */
export type MemberClass =
  | { readonly kind: "kept" }
  | { readonly kind: "ignored" }
  | { readonly kind: "refused"; readonly code: MemberCode };

/** classifyMember says whether a top-level member is kept, ignored or refused, and why (§14.3). */
export function classifyMember(name: string): MemberClass {
  if (KEPT.has(name)) return { kind: "kept" };
  if (IGNORED.has(name)) return { kind: "ignored" };
  const code = Object.hasOwn(REFUSED_MEMBERS, name) ? REFUSED_MEMBERS[name] : undefined;
  return { kind: "refused", code: code ?? "UnknownMember" };
}
