// The sandbox flags of `sbx run` and `sbx on-event` (sandbox-attest §5): --memory, --cpus, --pids,
// --timeout-ms into the sandbox's limits, and --workspace, --tmp-size, --disk, --user or
// --unsandboxed into SandboxOptions; contradictions and bad values are usage errors.
import { mkdtempSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { SandboxOptions } from "@sbx/host/sandbox";
import { UsageError } from "../command.ts";
import { byteSizeOpt } from "../bytesize.ts";

type Values = Record<string, string | boolean | readonly string[] | undefined>;
const str = (v: Values, k: string): string | undefined => (typeof v[k] === "string" ? v[k] : undefined);

/** intOpt reads --NAME as an integer ≥ `min`; undefined when absent. */
export function intOpt(v: string | undefined, name: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d{1,15}$/.test(v) || !Number.isSafeInteger(n) || n < min)
    throw new UsageError(`--${name} must be an integer ≥ ${min}`);
  return n;
}

/** timeoutOpt reads --timeout-ms: a positive integer, undefined when absent. */
export function timeoutOpt(v: string | undefined): number | undefined {
  const timeoutMs = v === undefined ? undefined : Number(v);
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 1))
    throw new UsageError("--timeout-ms must be a positive integer");
  return timeoutMs;
}

/** sandboxLimits reads --memory, --cpus (at most this host's CPUs, at least 0.01) and --pids. */
export function sandboxLimits(v: Values): NonNullable<SandboxOptions["limits"]> {
  const cpus = str(v, "cpus");
  if (cpus !== undefined && !/^\d{1,4}(\.\d{1,3})?$/.test(cpus))
    throw new UsageError("--cpus must be a number such as 1 or 0.5");
  if (cpus !== undefined && Number(cpus) > availableParallelism())
    throw new UsageError(`--cpus ${cpus} is more than this host's ${String(availableParallelism())} CPUs`);
  const limits = {
    ...(v.memory !== undefined ? { memoryBytes: byteSizeOpt(str(v, "memory"), "memory", 1 << 20) } : {}),
    ...(cpus !== undefined ? { cpuMillis: Math.round(Number(cpus) * 1000) } : {}),
    ...(v.pids !== undefined ? { pids: intOpt(str(v, "pids"), "pids", 1) } : {}),
  } as NonNullable<SandboxOptions["limits"]>;
  if (cpus !== undefined && Number(cpus) < 0.01) throw new UsageError("--cpus must be at least 0.01");
  return limits;
}

/** sandboxOpts: the sandbox the flags describe (§5), or null for --unsandboxed. */
export function sandboxOpts(v: Values): SandboxOptions | null {
  const sandboxOnly = ["workspace", "memory", "cpus", "pids", "tmp-size", "disk", "user"].filter(
    (k) => v[k] !== undefined,
  );
  if (v.unsandboxed === true) {
    if (sandboxOnly.length > 0)
      throw new UsageError(`--unsandboxed cannot take --${sandboxOnly.join(", --")}`);
    return null;
  }
  if (v.watch !== undefined)
    throw new UsageError("--watch is for --unsandboxed runs (a sandbox journals its workspace)");
  const limits = sandboxLimits(v);
  const ws = str(v, "workspace");
  const user = str(v, "user");
  const tmpBytes = byteSizeOpt(str(v, "tmp-size"), "tmp-size", 4096);
  const disk = byteSizeOpt(str(v, "disk"), "disk", 1);
  return {
    workspace: ws === undefined ? mkdtempSync(join(tmpdir(), "sbx-workspace-")) : resolve(ws),
    limits,
    ...(user !== undefined ? { user } : {}),
    ...(tmpBytes !== undefined ? { tmpBytes } : {}),
    ...(disk !== undefined ? { workspaceBytes: disk } : {}),
  };
}
