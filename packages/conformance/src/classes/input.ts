// Accessors for a vector's `input`, shared by the class modules' handlers. A vector whose input has
// the wrong shape is a broken vector, not a failure the spec names: each accessor throws a TypeError
// naming the field (`what`), which the runner reports as a harness error.
import type { Json, JsonObject } from "@sbx/wire";

/** obj returns `v` as a JSON object; refuses null, lists and scalars. */
export function obj(v: Json | undefined, what = "input"): JsonObject {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new TypeError(`${what} must be an object`);
  return v;
}

/** list returns `v` as a JSON list; refuses anything else. */
export function list(v: Json | undefined, what = "input"): Json[] {
  if (!Array.isArray(v)) throw new TypeError(`${what} must be a list`);
  return v;
}

/** str returns `v` as a string; refuses anything else. */
export function str(v: Json | undefined, what: string): string {
  if (typeof v !== "string") throw new TypeError(`${what} must be a string`);
  return v;
}

/** strings returns `v` as a list of strings; refuses a non-list or a member that is not a string. */
export function strings(v: Json | undefined, what: string): string[] {
  return list(v, what).map((x) => str(x, `${what} member`));
}

/** optionalStrings reads an optional list loosely: each member as String(x); undefined when not a list. */
export function optionalStrings(v: Json | undefined): string[] | undefined {
  return Array.isArray(v) ? v.map(String) : undefined;
}
