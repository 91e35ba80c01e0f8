// §14.3 The value domains of the kept members, each checked in place: a bad value is refused at its
// own JSON pointer with `InvalidValue` (or the substitution or widening code that applies), and
// checking goes on so that every offending member is named.
import type { Json, JsonObject } from "@sbx/wire";
import type { Offending } from "./jsonc.ts";
import { scanSubstitutions } from "./substitution.ts";
import type { GpuRequirement, HostRequirements, PortAttributes } from "./types.ts";

/** Where refusals are collected while the members are checked. */
export type Sink = Offending[];

/** isObject reports whether a parsed value is a JSON object, §14.3. */
export function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function bad(out: Sink, pointer: string): null {
  out.push({ pointer, code: "InvalidValue" });
  return null;
}

function child(pointer: string, key: string | number): string {
  return `${pointer}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

/** checkKeys refuses members of `o` outside `allowed` with `UnknownMember`, §14.3. */
export function checkKeys(o: JsonObject, allowed: readonly string[], pointer: string, out: Sink): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) out.push({ pointer: child(pointer, k), code: "UnknownMember" });
}

/** text accepts a string free of NUL whose substitutions are all deterministic, §14.3. */
export function text(v: Json | undefined, pointer: string, out: Sink, substitutions = true): string | null {
  if (typeof v !== "string" || v.includes("\0")) return bad(out, pointer);
  return !substitutions || scanSubstitutions(v, pointer, out) ? v : null;
}

/** bool accepts a boolean, §14.3. */
export function bool(v: Json | undefined, pointer: string, out: Sink): boolean | null {
  return typeof v === "boolean" ? v : bad(out, pointer);
}

const ENV_NAME = /^[^=\0]+$/;

/** envMap accepts an object of variable names to strings (and to null when `nulls`), §14.3. */
export function envMap(
  v: Json | undefined,
  pointer: string,
  out: Sink,
  nulls: boolean,
): Record<string, string | null> | null {
  if (!isObject(v)) return bad(out, pointer);
  const env = Object.create(null) as Record<string, string | null>;
  let ok = true;
  for (const [k, x] of Object.entries(v)) {
    const p = child(pointer, k);
    let good = ENV_NAME.test(k) && scanSubstitutions(k, p, out, false);
    if (!ENV_NAME.test(k)) bad(out, p);
    const value = x === null && nulls ? null : text(x, p, out);
    if (value === null && !(x === null && nulls)) good = false;
    if (good) env[k] = value;
    else ok = false;
  }
  return ok ? env : null;
}

const USER = /^(?:[A-Za-z_][A-Za-z0-9_.-]*\$?|[0-9]+)$/;

/** userName accepts a POSIX user name or a numeric uid, §14.3. */
export function userName(v: Json | undefined, pointer: string, out: Sink): string | null {
  if (typeof v === "string" && v.includes("${"))
    return text(v, pointer, out) === null ? null : bad(out, pointer);
  return typeof v === "string" && USER.test(v) ? v : bad(out, pointer);
}

/** folder accepts an absolute path without empty, `.` or `..` segments, `$`, or substitutions, §14.3. */
export function folder(v: Json | undefined, pointer: string, out: Sink): string | null {
  if (typeof v !== "string") return bad(out, pointer);
  if (!scanSubstitutions(v, pointer, out, false)) return null;
  if (v === "/") return v;
  const segs = v.split("/");
  const ok =
    v.startsWith("/") &&
    !v.includes("\0") &&
    !v.includes("$") &&
    segs.slice(1).every((s) => s !== "" && s !== "." && s !== "..");
  return ok ? v : bad(out, pointer);
}

const BYTES = /^(\d+)([tgmk]b)?$/;
const UNIT: Readonly<Record<string, bigint>> = { kb: 1n << 10n, mb: 1n << 20n, gb: 1n << 30n, tb: 1n << 40n };
const U64_MAX = (1n << 64n) - 1n;

/** byteCount accepts "<digits>[kb|mb|gb|tb]" (powers of 1024) and returns a decimal string, §14.3. */
export function byteCount(v: Json | undefined, pointer: string, out: Sink): string | null {
  const m = typeof v === "string" ? BYTES.exec(v) : null;
  if (m === null) return bad(out, pointer);
  const n = BigInt(m[1] ?? "0") * (m[2] === undefined ? 1n : (UNIT[m[2]] ?? 1n));
  return n <= U64_MAX ? n.toString() : bad(out, pointer);
}

/** count accepts a safe integer of at least `min`, §14.3. */
export function count(v: Json | undefined, pointer: string, out: Sink, min: number): number | null {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= min ? v : bad(out, pointer);
}

function gpu(v: Json | undefined, pointer: string, out: Sink): GpuRequirement | null {
  if (v === undefined || v === false) return { mode: "none", cores: 0, memory_bytes: "0" };
  if (v === "optional") return { mode: "optional", cores: 0, memory_bytes: "0" };
  if (v === true) return { mode: "required", cores: 0, memory_bytes: "0" };
  if (!isObject(v)) return bad(out, pointer);
  checkKeys(v, ["cores", "memory"], pointer, out);
  const cores = v.cores === undefined ? 0 : count(v.cores, child(pointer, "cores"), out, 1);
  const memory = v.memory === undefined ? "0" : byteCount(v.memory, child(pointer, "memory"), out);
  return cores === null || memory === null ? null : { mode: "required", cores, memory_bytes: memory };
}

/** hostRequirements normalises `hostRequirements` with every default explicit (§14.3). */
export function hostRequirements(v: Json | undefined, pointer: string, out: Sink): HostRequirements | null {
  const o = v === undefined ? (Object.create(null) as JsonObject) : v;
  if (!isObject(o)) return bad(out, pointer);
  checkKeys(o, ["cpus", "memory", "storage", "gpu"], pointer, out);
  const cpus = o.cpus === undefined ? 1 : count(o.cpus, child(pointer, "cpus"), out, 1);
  const memory = o.memory === undefined ? "0" : byteCount(o.memory, child(pointer, "memory"), out);
  const storage = o.storage === undefined ? "0" : byteCount(o.storage, child(pointer, "storage"), out);
  const g = gpu(o.gpu, child(pointer, "gpu"), out);
  if (cpus === null || memory === null || storage === null || g === null) return null;
  return { cpus, memory_bytes: memory, storage_bytes: storage, gpu: g };
}

const HOST_PORT = /^[A-Za-z0-9._-]+:([0-9]{1,5})$/;

function port(v: Json | undefined, pointer: string, out: Sink): number | string | null {
  if (typeof v === "number") return Number.isInteger(v) && v >= 1 && v <= 65535 ? v : bad(out, pointer);
  const m = typeof v === "string" ? HOST_PORT.exec(v) : null;
  return m !== null && Number(m[1]) >= 1 && Number(m[1]) <= 65535 ? (v as string) : bad(out, pointer);
}

function comparePorts(a: number | string, b: number | string): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "number") return -1;
  if (typeof b === "number") return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** forwardPorts accepts ports and "host:port" strings, sorted (numbers first) and deduplicated, §14.3. */
export function forwardPorts(v: Json | undefined, pointer: string, out: Sink): (number | string)[] | null {
  if (v === undefined) return [];
  if (!Array.isArray(v)) return bad(out, pointer);
  const ports = v.map((x, i) => port(x, child(pointer, i), out));
  if (ports.some((p) => p === null)) return null;
  return [...new Set(ports as (number | string)[])].sort(comparePorts);
}

const PROTOCOLS = ["http", "https"] as const;
const ON_AUTO_FORWARD = [
  "notify",
  "openBrowser",
  "openBrowserOnce",
  "openPreview",
  "silent",
  "ignore",
] as const;

function oneOf<T extends string>(
  v: Json | undefined,
  set: readonly T[],
  pointer: string,
  out: Sink,
): T | null {
  return typeof v === "string" && (set as readonly string[]).includes(v) ? (v as T) : bad(out, pointer);
}

/** portAttributes normalises one portsAttributes entry; `elevateIfNeeded: true` is widening (§14.3). */
export function portAttributes(v: Json | undefined, pointer: string, out: Sink): PortAttributes | null {
  if (!isObject(v)) return bad(out, pointer);
  checkKeys(v, ["label", "protocol", "onAutoForward", "requireLocalPort", "elevateIfNeeded"], pointer, out);
  const label = v.label === undefined ? "Application" : text(v.label, child(pointer, "label"), out);
  const protocol =
    v.protocol === undefined ? null : oneOf(v.protocol, PROTOCOLS, child(pointer, "protocol"), out);
  const onAuto =
    v.onAutoForward === undefined
      ? "notify"
      : oneOf(v.onAutoForward, ON_AUTO_FORWARD, child(pointer, "onAutoForward"), out);
  const local =
    v.requireLocalPort === undefined
      ? false
      : bool(v.requireLocalPort, child(pointer, "requireLocalPort"), out);
  const elevate =
    v.elevateIfNeeded === undefined ? false : bool(v.elevateIfNeeded, child(pointer, "elevateIfNeeded"), out);
  if (elevate === true) out.push({ pointer: child(pointer, "elevateIfNeeded"), code: "PrivilegeWidening" });
  if (label === null || onAuto === null || local === null || elevate !== false) return null;
  if (protocol === null && v.protocol !== undefined) return null;
  return { label, protocol, on_auto_forward: onAuto, require_local_port: local };
}

/** portsAttributes normalises the map of port patterns to attributes, §14.3. */
export function portsAttributes(
  v: Json | undefined,
  pointer: string,
  out: Sink,
): Record<string, PortAttributes> | null {
  const result = Object.create(null) as Record<string, PortAttributes>;
  if (v === undefined) return result;
  if (!isObject(v)) return bad(out, pointer);
  let ok = true;
  for (const [k, x] of Object.entries(v)) {
    const a = portAttributes(x, child(pointer, k), out);
    if (a === null) ok = false;
    else result[k] = a;
  }
  return ok ? result : null;
}
