import { isDigest, type Json, type JsonObject } from "@sbx/wire";
import { key } from "../../generate/keys.ts";

// Paths into a JSON value, as lists of member names and array indices written as strings.

/** leafPaths lists the path of every leaf (non-object, non-array value) of `v`, in member order. */
export function leafPaths(v: Json, prefix: string[] = []): string[][] {
  if (typeof v !== "object" || v === null) return [prefix];
  const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
  return entries.flatMap(([k, x]) => leafPaths(x, [...prefix, k]));
}

/** getPath reads the value at `path`. */
export function getPath(v: Json, path: readonly string[]): Json {
  return path.reduce<Json>((o, k) => (o as Record<string, Json>)[k] as Json, v);
}

/** setPath returns a deep copy of `v` with the value at `path` replaced (or added). */
export function setPath(v: Json, path: readonly string[], value: Json): JsonObject {
  const copy = structuredClone(v) as JsonObject;
  const parent = getPath(copy, path.slice(0, -1)) as Record<string, Json>;
  parent[path[path.length - 1]!] = value;
  return copy;
}

/** deletePath returns a deep copy of `v` with the member at `path` removed. */
export function deletePath(v: Json, path: readonly string[]): JsonObject {
  const copy = structuredClone(v) as JsonObject;
  const parent = getPath(copy, path.slice(0, -1)) as Record<string, Json>;
  Reflect.deleteProperty(parent, path[path.length - 1]!);
  return copy;
}

/** alterLeaf changes a leaf minimally, keeping its type: a digest's last hex digit, a number +1. */
export function alterLeaf(v: Json): Json {
  if (typeof v === "number") return v + 1;
  if (typeof v !== "string") throw new TypeError("alterLeaf: leaf is not a string or number");
  if (isDigest(v) || /^[0-9a-f]{64}$/.test(v)) return v.slice(0, -1) + (v.endsWith("0") ? "1" : "0");
  const swaps: Record<string, string> = {
    S4: "S8",
    attributed: "guessed",
    exited: "finished",
    "2750000": "2750001",
    unit: "unit2",
  };
  if (swaps[v] !== undefined) return swaps[v];
  if (v.startsWith("did:key:")) return key("host-2").did;
  return v + "x";
}
