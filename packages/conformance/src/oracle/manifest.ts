// The manifest output oracle (sandbox-attest §14.2–§14.5): the document `manifest.ingest` must answer
// for an accepted devcontainer.json, restated literally from the spec's tables. It shares no code
// with @sbx/sandbox-attest (only BLAKE3, JCS addresses and UTF-8 from @sbx/wire). It does not
// restate refusals: a source it cannot read as JSONC, or whose members are outside the subset,
// throws, and generation then fails for an `ok` vector (the generator stated a refused document valid).
import { addressOf, blake3, toHex, utf8, type Json, type JsonObject } from "@sbx/wire";

/** §14.2 items 2–3: drop `//` and `/* *\/` comments and a comma before `}` or `]`, outside strings. */
function plainJson(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (text.startsWith("//", i)) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (text.startsWith("/*", i)) {
      i = text.indexOf("*/", i + 2) + 2;
      out += " ";
    } else {
      out += c;
      i++;
    }
  }
  // Comments are gone, so a trailing comma is a comma followed by whitespace and a closer; strings
  // cannot be touched because the pattern is applied only between them.
  return out
    .split(/("(?:[^"\\]|\\.)*")/)
    .map((part, k) => (k % 2 === 1 ? part : part.replace(/,(\s*[}\]])/g, "$1")))
    .join("");
}

const KEPT = [
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
  "privileged",
];
const IGNORED = [
  "customizations",
  "settings",
  "extensions",
  "devPort",
  "$schema",
  "shutdownAction",
  "updateRemoteUserUID",
  "userEnvProbe",
];

/** §14.5: sizes are digits with an optional unit kb, mb, gb or tb, each a power of 1024. */
function bytes(v: unknown): string {
  if (v === undefined) return "0";
  const m = typeof v === "string" ? /^([0-9]+)(kb|mb|gb|tb)?$/.exec(v) : null;
  if (m === null) throw new Error(`manifest oracle: size ${JSON.stringify(v)}`);
  const power = m[2] === undefined ? 0 : ["kb", "mb", "gb", "tb"].indexOf(m[2]) + 1;
  return (BigInt(m[1]!) * 1024n ** BigInt(power)).toString();
}

/** ports_attributes entry (§14.5): label "Application", protocol null, "notify", false by default. */
function attributes(a: Record<string, unknown>, subst: (s: string) => string): JsonObject {
  return {
    label: typeof a.label === "string" ? subst(a.label) : "Application",
    protocol: (a.protocol as string | undefined) ?? null,
    on_auto_forward: (a.onAutoForward as string | undefined) ?? "notify",
    require_local_port: (a.requireLocalPort as boolean | undefined) ?? false,
  };
}

/** environment is the §14.5 table, row by row, from an accepted document. */
function environment(d: Record<string, unknown>): JsonObject {
  for (const k of Object.keys(d))
    if (!KEPT.includes(k) && !IGNORED.includes(k) && k !== "name")
      throw new Error(`manifest oracle: member ${k} is not accepted`);
  // §14.3: privileged is accepted only as false, its default, and is not part of the environment.
  if (d.privileged !== undefined && d.privileged !== false)
    throw new Error("manifest oracle: privileged other than false is not accepted");
  // The image without its tag: name@sha256:<hex>; a tag is a ':' after the name's last '/'.
  const [ref, digest] = String(d.image).split("@") as [string, string];
  const slash = ref.lastIndexOf("/");
  const colon = ref.indexOf(":", slash + 1);
  const image = `${colon < 0 ? ref : ref.slice(0, colon)}@${digest}`;
  const folder = typeof d.workspaceFolder === "string" ? d.workspaceFolder : "/workspace";
  const base = folder.split("/").pop()!;
  // §14.4: the two deterministic substitutions; an accepted document holds no other.
  const subst = (s: string) =>
    s
      .replaceAll("${containerWorkspaceFolderBasename}", base)
      .replaceAll("${containerWorkspaceFolder}", folder);
  const env: JsonObject = {};
  for (const [k, v] of Object.entries((d.containerEnv ?? {}) as Record<string, string>)) env[k] = subst(v);
  for (const [k, v] of Object.entries((d.remoteEnv ?? {}) as Record<string, string | null>))
    env[k] = v === null ? null : subst(v);
  const hr = (d.hostRequirements ?? {}) as Record<string, unknown>;
  const g = hr.gpu;
  const gpuObj = (typeof g === "object" && g !== null ? g : {}) as Record<string, unknown>;
  const gpu = {
    mode:
      g === true || (typeof g === "object" && g !== null)
        ? "required"
        : g === "optional"
          ? "optional"
          : "none",
    cores: (gpuObj.cores as number | undefined) ?? 0,
    memory_bytes: bytes(gpuObj.memory),
  };
  const ports = [...new Set((d.forwardPorts ?? []) as (number | string)[])];
  const numbers = ports.filter((p): p is number => typeof p === "number").sort((a, b) => a - b);
  const strings = ports.filter((p): p is string => typeof p === "string").sort();
  const pa: JsonObject = {};
  for (const [k, v] of Object.entries((d.portsAttributes ?? {}) as Record<string, Record<string, unknown>>))
    pa[k] = attributes(v, subst);
  const other = d.otherPortsAttributes as Record<string, unknown> | undefined;
  return {
    image,
    env,
    user: ((d.remoteUser ?? d.containerUser) as string | undefined) ?? null,
    workspace_folder: folder,
    host_requirements: {
      cpus: (hr.cpus as number | undefined) ?? 1,
      memory_bytes: bytes(hr.memory),
      storage_bytes: bytes(hr.storage),
      gpu,
    },
    init: (d.init as boolean | undefined) ?? false,
    forward_ports: [...numbers, ...strings],
    ports_attributes: pa,
    other_ports_attributes: other === undefined ? null : attributes(other, subst),
  };
}

/** JSON pointer of a top-level member (RFC 6901: `~` as `~0`, `/` as `~1`). */
const pointer = (k: string) => `/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`;

/** ingest is the §14.5 manifest document of an accepted source. */
function ingest(input: JsonObject): Json {
  const raw =
    typeof input.source_b64 === "string"
      ? Buffer.from(input.source_b64, "base64")
      : utf8(input.source as string);
  let text = Buffer.from(raw).toString("utf8");
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  const d = JSON.parse(plainJson(text)) as Record<string, unknown>;
  const env = environment(d);
  return {
    type: "sandbox-attest.manifest/1",
    address: addressOf(env),
    name: (d.name as string | undefined) ?? null,
    environment: env,
    source: { digest: `blake3:${toHex(blake3(raw))}`, size: raw.length },
    ignored: Object.keys(d)
      .filter((k) => IGNORED.includes(k))
      .map(pointer)
      .sort(),
  };
}

/** manifestOutputOracle is the output of a valid `manifest.ingest` case; undefined for other ops. */
export function manifestOutputOracle(op: string, input: Json): Json | undefined {
  return op === "manifest.ingest" ? ingest(input as JsonObject) : undefined;
}
