// §14.6 Verifying a signed manifest: the envelope's signature and canonical payload (wire §2.4), then
// the document itself: its exact shape, an environment inside the subset and in normal form, and an
// address that is the environment's. A signer cannot smuggle a command into a manifest.
import {
  addressOf,
  canonicalize,
  isDigest,
  openEnvelope,
  type Digest,
  type Json,
  type JsonObject,
} from "@sbx/wire";
import { buildEnvironment, devcontainerOf } from "./environment.ts";
import { refusal } from "./ingest.ts";
import type { Offending } from "./jsonc.ts";
import { MAX_SOURCE_BYTES } from "./jsonc.ts";
import { classifyMember, IGNORED_MEMBERS } from "./subset.ts";
import { MANIFEST_PAYLOAD_TYPE, MANIFEST_TYPE, type Manifest, type ManifestEnvironment } from "./types.ts";
import { isObject } from "./values.ts";

/** What verifying a signed manifest yields. */
export interface VerifiedManifest {
  readonly manifest: Manifest;
  /** The manifest address: the environment's content address. */
  readonly address: Digest;
  /** The address of the signed document (its payload bytes). */
  readonly document: Digest;
  readonly signers: readonly string[];
}

const TOP = ["type", "address", "name", "environment", "source", "ignored"];
const ENV = [
  "image",
  "env",
  "user",
  "workspace_folder",
  "host_requirements",
  "init",
  "forward_ports",
  "ports_attributes",
  "other_ports_attributes",
];
const HOST = ["cpus", "memory_bytes", "storage_bytes", "gpu"];
const GPU = ["mode", "cores", "memory_bytes"];
const PORT = ["label", "protocol", "on_auto_forward", "require_local_port"];

// A member outside the expected set keeps the code its devcontainer name would get (a smuggled
// `postCreateCommand` is a LifecycleCommand), else UnknownMember.
function exactKeys(o: JsonObject, keys: readonly string[], pointer: string, out: Offending[]): void {
  for (const k of Object.keys(o)) {
    if (keys.includes(k)) continue;
    const c = classifyMember(k);
    out.push({
      pointer: `${pointer}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`,
      code: c.kind === "refused" ? c.code : "UnknownMember",
    });
  }
  for (const k of keys)
    if (!Object.hasOwn(o, k)) out.push({ pointer: `${pointer}/${k}`, code: "InvalidValue" });
}

function shaped(
  v: Json | undefined,
  keys: readonly string[],
  pointer: string,
  out: Offending[],
): v is JsonObject {
  if (!isObject(v)) {
    out.push({ pointer, code: "InvalidValue" });
    return false;
  }
  const before = out.length;
  exactKeys(v, keys, pointer, out);
  return out.length === before;
}

function typed(ok: boolean, pointer: string, out: Offending[]): void {
  if (!ok) out.push({ pointer, code: "InvalidValue" });
}

function checkPort(v: Json | undefined, p: string, out: Offending[]): void {
  if (!shaped(v, PORT, p, out)) return;
  typed(
    typeof v.label === "string" &&
      typeof v.on_auto_forward === "string" &&
      typeof v.require_local_port === "boolean",
    p,
    out,
  );
  typed(v.protocol === null || typeof v.protocol === "string", `${p}/protocol`, out);
}

function checkHost(v: Json | undefined, out: Offending[]): void {
  const p = "/environment/host_requirements";
  if (!shaped(v, HOST, p, out)) return;
  typed(
    typeof v.cpus === "number" && typeof v.memory_bytes === "string" && typeof v.storage_bytes === "string",
    p,
    out,
  );
  if (shaped(v.gpu, GPU, `${p}/gpu`, out))
    typed(
      typeof v.gpu.mode === "string" &&
        typeof v.gpu.cores === "number" &&
        typeof v.gpu.memory_bytes === "string",
      `${p}/gpu`,
      out,
    );
}

// checkShape makes sure every member has the JSON type devcontainerOf expects.
function checkShape(e: JsonObject, out: Offending[]): void {
  const p = "/environment";
  typed(
    typeof e.image === "string" && typeof e.workspace_folder === "string" && typeof e.init === "boolean",
    p,
    out,
  );
  typed(e.user === null || typeof e.user === "string", `${p}/user`, out);
  typed(
    isObject(e.env) && Object.values(e.env).every((x) => x === null || typeof x === "string"),
    `${p}/env`,
    out,
  );
  typed(
    Array.isArray(e.forward_ports) &&
      e.forward_ports.every((x) => typeof x === "number" || typeof x === "string"),
    `${p}/forward_ports`,
    out,
  );
  checkHost(e.host_requirements, out);
  if (isObject(e.ports_attributes))
    for (const [k, a] of Object.entries(e.ports_attributes)) checkPort(a, `${p}/ports_attributes/${k}`, out);
  else typed(false, `${p}/ports_attributes`, out);
  if (e.other_ports_attributes !== null)
    checkPort(e.other_ports_attributes, `${p}/other_ports_attributes`, out);
}

const BACK: Readonly<Record<string, string>> = {
  containerEnv: "env",
  remoteEnv: "env",
  remoteUser: "user",
  workspaceFolder: "workspace_folder",
  hostRequirements: "host_requirements",
  forwardPorts: "forward_ports",
  portsAttributes: "ports_attributes",
  otherPortsAttributes: "other_ports_attributes",
};

// Re-derives the environment from its devcontainer form: a value outside the subset is refused with
// its code, and anything not in normal form is NotNormalised.
function checkNormalForm(e: ManifestEnvironment, out: Offending[]): void {
  const found: Offending[] = [];
  const rebuilt = buildEnvironment(devcontainerOf(e), found);
  for (const r of found) {
    const [, head = "", ...rest] = r.pointer.split("/");
    out.push({ pointer: ["/environment", BACK[head] ?? head, ...rest].join("/"), code: r.code });
  }
  if (found.length === 0 && (rebuilt === null || canonicalize(rebuilt) !== canonicalize(e)))
    out.push({ pointer: "/environment", code: "NotNormalised" });
}

function checkSourceAndIgnored(m: JsonObject, out: Offending[]): void {
  const s = m.source;
  if (shaped(s, ["digest", "size"], "/source", out))
    typed(
      isDigest(s.digest) &&
        typeof s.size === "number" &&
        Number.isSafeInteger(s.size) &&
        s.size >= 0 &&
        s.size <= MAX_SOURCE_BYTES,
      "/source",
      out,
    );
  const ig = m.ignored;
  const allowed = IGNORED_MEMBERS.map((n) => `/${n}`);
  const ok =
    Array.isArray(ig) &&
    ig.every(
      (x, i) => typeof x === "string" && allowed.includes(x) && (i === 0 || (ig[i - 1] as string) < x),
    );
  typed(ok, "/ignored", out);
}

/**
 * checkManifest checks a parsed manifest document (§14.6) and returns it typed. Throws
 * SandboxAttestError `BadManifest` naming every offending member: unknown or smuggled members (with
 * the code their devcontainer name carries), wrong types, an environment outside the subset or not
 * in normal form, an address that is not the environment's, ignored entries that are not ignorable.
 */
export function checkManifest(payload: Json): Manifest {
  const out: Offending[] = [];
  if (!shaped(payload, TOP, "", out)) throw refusal("BadManifest", out);
  typed(payload.type === MANIFEST_TYPE, "/type", out);
  typed(payload.name === null || typeof payload.name === "string", "/name", out);
  checkSourceAndIgnored(payload, out);
  const e = payload.environment;
  if (shaped(e, ENV, "/environment", out)) {
    checkShape(e, out);
    if (out.length === 0) checkNormalForm(e as unknown as ManifestEnvironment, out);
    if (out.length === 0 && payload.address !== addressOf(e))
      out.push({ pointer: "/address", code: "AddressMismatch" });
  }
  if (out.length > 0) throw refusal("BadManifest", out);
  return payload as unknown as Manifest;
}

/**
 * verifyManifest opens a signed manifest (§14.6): WireError `BadEnvelope`, `WrongPayloadType`,
 * `BadSignature`, `UnknownSigner` (when `stewards` is given and none signed), `NotCanonical`; then
 * SandboxAttestError `BadManifest` from checkManifest.
 */
export function verifyManifest(envelope: unknown, stewards?: readonly string[]): VerifiedManifest {
  const opened = openEnvelope(envelope, {
    payloadType: MANIFEST_PAYLOAD_TYPE,
    ...(stewards ? { signers: stewards } : {}),
  });
  const manifest = checkManifest(opened.payload);
  return { manifest, address: manifest.address, document: opened.address, signers: opened.signers };
}
