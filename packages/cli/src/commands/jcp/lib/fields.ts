// The grant fields `jcp issue` (§4.1) and `jcp attenuate` (§4.4) read from the command line: the
// same options, read the same way. A child inherits whatever is left out; issue then requires what a
// root must state.
import type { ParseArgsConfig } from "node:util";
import type { ChildFields } from "@sbx/jcp-grant/grant";
import { UsageError } from "../../../command.ts";
import { amountArg, countArg, sortedSet, timeArg } from "./files.ts";

/** GRANT_OPTIONS are the options both commands take: signer, holder, the grant's fields, output. */
export const GRANT_OPTIONS = {
  key: { type: "string" },
  holder: { type: "string" },
  resource: { type: "string", multiple: true },
  action: { type: "string", multiple: true },
  uj: { type: "string" },
  calls: { type: "string" },
  "wall-ms": { type: "string" },
  depth: { type: "string" },
  nbf: { type: "string" },
  exp: { type: "string" },
  ttl: { type: "string" },
  out: { type: "string" },
  json: { type: "boolean" },
} as const satisfies ParseArgsConfig["options"];

/** The parsed values of the grant's fields among GRANT_OPTIONS. */
export interface FieldValues {
  readonly resource?: string[] | undefined;
  readonly action?: string[] | undefined;
  readonly uj?: string | undefined;
  readonly calls?: string | undefined;
  readonly "wall-ms"?: string | undefined;
  readonly depth?: string | undefined;
  readonly nbf?: string | undefined;
  readonly exp?: string | undefined;
  readonly ttl?: string | undefined;
}

/**
 * grantFields reads the fields a grant states for `holder`, each left out when its option is absent.
 * --ttl is milliseconds from `now`, instead of --exp. Refuses (UsageError) a malformed count, amount
 * or time, and both --exp and --ttl; with `expiry` "required", also neither.
 */
export function grantFields(
  v: FieldValues,
  holder: string,
  expiry: "optional" | "required",
  now = Date.now(),
): ChildFields {
  const resources = sortedSet(v.resource);
  const actions = sortedSet(v.action);
  const uj = amountArg(v.uj, "uj");
  const calls = countArg(v.calls, "calls");
  const wall_ms = countArg(v["wall-ms"], "wall-ms");
  const depth = countArg(v.depth, "depth");
  const exp_ms = expiryArg(v, expiry, now);
  return {
    holder,
    ...(resources ? { resources } : {}),
    ...(actions ? { actions } : {}),
    ...(uj !== undefined ? { uj } : {}),
    ...(calls !== undefined ? { calls } : {}),
    ...(wall_ms !== undefined ? { wall_ms } : {}),
    ...(v.nbf !== undefined ? { nbf_ms: timeArg(v.nbf, "nbf") } : {}),
    ...(exp_ms !== undefined ? { exp_ms } : {}),
    ...(depth !== undefined ? { depth } : {}),
  };
}

/** expiryArg reads --exp (a time) or --ttl (ms from now); undefined when neither is given. */
function expiryArg(v: FieldValues, expiry: "optional" | "required", now: number): number | undefined {
  const ttl = countArg(v.ttl, "ttl");
  if (expiry === "required" && (v.exp === undefined) === (ttl === undefined))
    throw new UsageError("give exactly one of --exp and --ttl");
  if (v.exp !== undefined && ttl !== undefined) throw new UsageError("give at most one of --exp and --ttl");
  return ttl !== undefined ? now + ttl : v.exp !== undefined ? timeArg(v.exp, "exp") : undefined;
}
