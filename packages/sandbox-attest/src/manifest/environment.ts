// §14.3–§14.4 From the kept members of a devcontainer.json to the normalised environment, and back
// (the inverse lets a verifier check that an environment is in normal form, and tests re-ingest it).
import type { JsonObject } from "@sbx/wire";
import { image } from "./image.ts";
import { resolveSubstitutions } from "./substitution.ts";
import { DEFAULT_WORKSPACE_FOLDER, type ManifestEnvironment, type PortAttributes } from "./types.ts";
import {
  bool,
  envMap,
  folder,
  forwardPorts,
  hostRequirements,
  portAttributes,
  portsAttributes,
  text,
  userName,
  type Sink,
} from "./values.ts";

function mergeEnv(
  container: Record<string, string | null>,
  remote: Record<string, string | null>,
  ws: string,
): Record<string, string | null> {
  const env = Object.create(null) as Record<string, string | null>;
  for (const [k, v] of [...Object.entries(container), ...Object.entries(remote)])
    env[k] = v === null ? null : resolveSubstitutions(v, ws);
  return env;
}

function resolveLabels(attrs: Record<string, PortAttributes>, ws: string): Record<string, PortAttributes> {
  const out = Object.create(null) as Record<string, PortAttributes>;
  for (const [k, a] of Object.entries(attrs)) out[k] = { ...a, label: resolveSubstitutions(a.label, ws) };
  return out;
}

function optional<T>(v: JsonObject[string] | undefined, dflt: T, check: () => T | null): T | null {
  return v === undefined ? dflt : check();
}

/**
 * buildEnvironment normalises the kept members of `doc` (§14.3): defaults made explicit, env merged
 * (remoteEnv over containerEnv) and resolved, ports sorted. Every refusal goes to `out`; returns null
 * when there was any. The `name` label is not part of the environment.
 */
export function buildEnvironment(doc: JsonObject, out: Sink): ManifestEnvironment | null {
  const before = out.length;
  const img = image(doc.image, "/image", out);
  const ws = optional(doc.workspaceFolder, DEFAULT_WORKSPACE_FOLDER, () =>
    folder(doc.workspaceFolder, "/workspaceFolder", out),
  );
  const container = optional(doc.containerEnv, {}, () =>
    envMap(doc.containerEnv, "/containerEnv", out, false),
  );
  const remote = optional(doc.remoteEnv, {}, () => envMap(doc.remoteEnv, "/remoteEnv", out, true));
  const cUser = optional(doc.containerUser, null, () => userName(doc.containerUser, "/containerUser", out));
  const rUser = optional(doc.remoteUser, null, () => userName(doc.remoteUser, "/remoteUser", out));
  const host = hostRequirements(doc.hostRequirements, "/hostRequirements", out);
  const init = optional(doc.init, false, () => bool(doc.init, "/init", out));
  const ports = forwardPorts(doc.forwardPorts, "/forwardPorts", out);
  const attrs = portsAttributes(doc.portsAttributes, "/portsAttributes", out);
  const other = optional(doc.otherPortsAttributes, null, () =>
    portAttributes(doc.otherPortsAttributes, "/otherPortsAttributes", out),
  );
  checkOverrideCommand(doc, out);
  checkPrivileged(doc, out);
  if (doc.name !== undefined) text(doc.name, "/name", out, false);
  if (
    out.length > before ||
    img === null ||
    ws === null ||
    container === null ||
    remote === null ||
    host === null ||
    init === null ||
    ports === null ||
    attrs === null
  )
    return null;
  return {
    image: img,
    env: mergeEnv(container, remote, ws),
    user: rUser ?? cUser,
    workspace_folder: ws,
    host_requirements: host,
    init,
    forward_ports: ports,
    ports_attributes: resolveLabels(attrs, ws),
    other_ports_attributes:
      other === null ? null : { ...other, label: resolveSubstitutions(other.label, ws) },
  };
}

// overrideCommand: true (the default for an image) keeps the image's own command from running;
// false would start it beside the unit, a command the manifest cannot show (§14.3).
function checkOverrideCommand(doc: JsonObject, out: Sink): void {
  if (doc.overrideCommand === undefined) return;
  const v = bool(doc.overrideCommand, "/overrideCommand", out);
  if (v === false) out.push({ pointer: "/overrideCommand", code: "LifecycleCommand" });
}

// privileged: false is the default and narrows nothing, so it is accepted and dropped (the
// environment has no member for it); true would lift the kernel's confinement of the sandbox (§14.3).
function checkPrivileged(doc: JsonObject, out: Sink): void {
  if (doc.privileged === undefined) return;
  if (bool(doc.privileged, "/privileged", out) === true)
    out.push({ pointer: "/privileged", code: "PrivilegeWidening" });
}

function portsBack(a: PortAttributes): JsonObject {
  const o: JsonObject = {
    label: a.label,
    onAutoForward: a.on_auto_forward,
    requireLocalPort: a.require_local_port,
  };
  if (a.protocol !== null) o.protocol = a.protocol;
  return o;
}

function gpuBack(env: ManifestEnvironment): JsonObject[string] {
  const g = env.host_requirements.gpu;
  if (g.mode === "none") return false;
  if (g.mode === "optional") return "optional";
  const o: JsonObject = {};
  if (g.cores > 0) o.cores = g.cores;
  if (g.memory_bytes !== "0") o.memory = g.memory_bytes;
  return Object.keys(o).length === 0 ? true : o;
}

/**
 * devcontainerOf writes an environment back as a devcontainer.json object in the subset (§14.5):
 * ingesting it yields the same environment, so the same address.
 */
export function devcontainerOf(env: ManifestEnvironment): JsonObject {
  const containerEnv: JsonObject = {};
  const remoteEnv: JsonObject = {};
  for (const [k, v] of Object.entries(env.env)) {
    if (v === null) remoteEnv[k] = null;
    else containerEnv[k] = v;
  }
  const hr = env.host_requirements;
  const attrs: JsonObject = {};
  for (const [k, a] of Object.entries(env.ports_attributes)) attrs[k] = portsBack(a);
  const doc: JsonObject = {
    image: env.image,
    containerEnv,
    remoteEnv,
    workspaceFolder: env.workspace_folder,
    hostRequirements: {
      cpus: hr.cpus,
      memory: hr.memory_bytes,
      storage: hr.storage_bytes,
      gpu: gpuBack(env),
    },
    init: env.init,
    forwardPorts: [...env.forward_ports],
    portsAttributes: attrs,
  };
  if (env.user !== null) doc.remoteUser = env.user;
  if (env.other_ports_attributes !== null) doc.otherPortsAttributes = portsBack(env.other_ports_attributes);
  return doc;
}
