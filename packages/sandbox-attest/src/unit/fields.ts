// Small field checks shared by the §4 unit descriptor and the §7 statement: each refuses with the
// code its caller names, so one parser's refusals all carry that parser's code.
import { isDigest, isDidKey, type Digest, type Json, type JsonObject } from "@sbx/wire";
import { SandboxAttestError, type SandboxAttestErrorCode } from "../errors.ts";

/** A checker bound to one refusal code and the path of the object being read. */
export interface Fields {
  fail(msg: string): never;
  obj(v: unknown, what: string, keys: readonly string[], optional?: readonly string[]): JsonObject;
  digest(v: unknown, what: string): Digest;
  str(v: unknown, what: string, max?: number): string;
  int(v: unknown, what: string, min?: number, max?: number): number;
  did(v: unknown, what: string): string;
  oneOf<T extends string>(v: unknown, what: string, allowed: readonly T[]): T;
}

/** fields returns checkers that throw SandboxAttestError(`code`) on the first violation. */
export function fields(code: SandboxAttestErrorCode): Fields {
  const fail = (msg: string): never => {
    throw new SandboxAttestError(code, msg);
  };
  return {
    fail,
    obj: (v, what, keys, optional = []) => exactObject(v, what, keys, optional, fail),
    digest: (v, what) => (isDigest(v) ? v : fail(`${what} is not a blake3 digest`)),
    str: (v, what, max = 4096) =>
      typeof v === "string" && v.length > 0 && v.length <= max
        ? v
        : fail(`${what} must be a string of 1 to ${max} characters`),
    int: (v, what, min = 0, max = Number.MAX_SAFE_INTEGER) =>
      typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max
        ? v
        : fail(`${what} must be an integer in [${min}, ${max}]`),
    did: (v, what) => (isDidKey(v) ? v : fail(`${what} is not an Ed25519 did:key`)),
    oneOf: (v, what, allowed) =>
      (allowed as readonly unknown[]).includes(v)
        ? (v as (typeof allowed)[number])
        : fail(`${what} must be one of ${allowed.join(", ")}`),
  };
}

/** exactObject refuses a non-object, a missing required member, and any member not listed. */
function exactObject(
  v: unknown,
  what: string,
  keys: readonly string[],
  optional: readonly string[],
  fail: (m: string) => never,
): JsonObject {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return fail(`${what} is not an object`);
  const o = v as JsonObject;
  for (const k of keys) if (!Object.hasOwn(o, k)) fail(`${what}.${k} is missing`);
  for (const k of Object.keys(o))
    if (!keys.includes(k) && !optional.includes(k)) fail(`${what}.${k} is not a known member`);
  return o;
}

/** isObject reports whether a JSON value is a plain object. */
export function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
