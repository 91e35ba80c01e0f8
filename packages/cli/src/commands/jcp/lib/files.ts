// Shared by the jcp commands: chain, ledger and revocation-list files, times and counts from the
// command line, and the printed form of effective grants. Files are written atomically with fsync.
import { existsSync } from "node:fs";
import type { Envelope } from "@sbx/wire";
import { resolveChain, RevocationList, type EffectiveGrant } from "@sbx/jcp-grant/grant";
import type { Trust } from "../../../trust.ts";
import { UsageError } from "../../../command.ts";
import { readPrincipal } from "@sbx/host/keys";
import { readJsonInput, writeJsonOutput } from "@sbx/host/files";
import { isLog } from "@sbx/host/log";
import { readLogJson } from "@sbx/host/ledger";

/**
 * readJson reads a JSON file within the §2.9 limits (refused above 16 MiB before it is read) with the
 * strict parser; a missing, oversize or malformed file is unusable input (CliError, exit 2).
 */
export function readJson(path: string, what = "file"): unknown {
  return readJsonInput(path, what);
}

/** writeJson writes a JSON file crash-safely: a temporary file, fsync, rename, fsync of the folder. */
export function writeJson(path: string, value: unknown): void {
  writeJsonOutput(path, value);
}

/** readChain reads a chain file: a JSON list of grant envelopes, root first. */
export function readChain(path: string): Envelope[] {
  const v = readJson(path, "chain file");
  if (!Array.isArray(v) || v.length === 0)
    throw new UsageError(`${path} is not a chain file (a JSON list of grant envelopes, root first)`);
  return v as Envelope[];
}

/**
 * readList reads a revocation list: an append-only log folder (jcp §4.3 storage rule; one
 * revocation envelope per entry), or a JSON list file of an older jcp (read only); missing means empty.
 */
export function readList(path: string | undefined): RevocationList | undefined {
  if (path === undefined) return undefined;
  if (!existsSync(path)) return RevocationList.verify([]);
  if (isLog(path)) return RevocationList.verify(readLogJson(path).values);
  const v = readJson(path, "revocation list");
  if (!Array.isArray(v)) throw new UsageError(`${path} is not a revocation list (a JSON list of envelopes)`);
  return RevocationList.verify(v);
}

/** principal accepts a did:key, or the path of a key file (public or private) whose did:key is meant. */
export function principal(v: string): string {
  return readPrincipal(v, "principal");
}

/** timeArg reads a time: Unix epoch milliseconds or an ISO 8601 date; `now` when absent. */
export function timeArg(v: string | undefined, name: string, now = Date.now()): number {
  if (v === undefined) return now;
  const n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new UsageError(`--${name} must be epoch milliseconds or an ISO 8601 time`);
  return n;
}

/** countArg reads a non-negative integer option, or undefined when absent. */
export function countArg(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new UsageError(`--${name} must be a non-negative integer`);
  return Number(v);
}

/** amountArg reads a microjoule amount; accepts a plain integer or a number with a J suffix (joules). */
export function amountArg(v: string | undefined, name: string): string | undefined {
  if (v === undefined) return undefined;
  const j = /^(\d+)(?:\.(\d{1,6}))?J$/.exec(v);
  if (j) return (BigInt(j[1]!) * 1_000_000n + BigInt((j[2] ?? "").padEnd(6, "0") || "0")).toString();
  if (!/^(0|[1-9]\d*)$/.test(v))
    throw new UsageError(
      `--${name} must be microjoules (e.g. 2500000) or joules with a J suffix (e.g. 2.5J)`,
    );
  return v;
}

/** sortedSet sorts and de-duplicates a repeated option (scopes are sorted sets, §4.2). */
export function sortedSet(xs: readonly string[] | undefined): string[] | undefined {
  return xs && xs.length ? [...new Set(xs)].sort() : undefined;
}

/** grantJson is the printed form of an effective grant. */
export function grantJson(g: EffectiveGrant): Record<string, unknown> {
  return { ...g, budget: { uj: g.budget.uj.toString(), calls: g.budget.calls, wall_ms: g.budget.wall_ms } };
}

/** grantLine is a one-line human summary of an effective grant. */
export function grantLine(g: EffectiveGrant): string {
  const b = g.budget;
  const lim = `${b.uj} µJ${b.calls === null ? "" : `, ${b.calls} calls`}${b.wall_ms === null ? "" : `, ${b.wall_ms} ms wall`}`;
  const win = `${new Date(g.nbf_ms).toISOString()} → ${new Date(g.exp_ms).toISOString()}`;
  return `${g.address}\n    ${g.issuer} → ${g.holder}\n    scope ${g.scope.resources.join(" ")} [${g.scope.actions.join(",")}]  budget ${lim}  depth ${g.depth}\n    valid ${win}`;
}

/**
 * rootsOf is the trusted roots a chain is verified to: the trust set, or for --any-signer the issuer
 * of the chain's own root (its signatures and links are still checked; the verdict says UNTRUSTED).
 */
export function rootsOf(t: Trust, chain: readonly Envelope[]): string[] {
  if (t.keys !== null) return [...t.keys];
  const root = resolveChain(chain.slice(0, 1))[0];
  return root ? [root.issuer] : [];
}
