// Byte sizes on the command line (`--memory`, `--tmp-size`, `--disk`): a count of bytes, or one with
// a unit as users write them, `512m`, `512mb`, `1G`, `1GiB` (k, m, g, t: powers of 1024, as the
// manifest's hostRequirements sizes are, sandbox-attest §14.3; case and a trailing `b`/`ib` free).
import { UsageError } from "./command.ts";

const SIZE = /^(\d{1,15})(?:([kmgt])(?:i?b)?)?$/i;
const SHIFT: Readonly<Record<string, bigint>> = { k: 10n, m: 20n, g: 30n, t: 40n };

/**
 * byteSizeOpt returns the bytes `v` names, undefined when absent. A usage error names `--name` when
 * `v` is not a size, is below `min`, or is beyond a safe integer.
 */
export function byteSizeOpt(v: string | undefined, name: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  const m = SIZE.exec(v.trim());
  const n = m === null ? -1n : BigInt(m[1] ?? "0") << (SHIFT[(m[2] ?? "").toLowerCase()] ?? 0n);
  if (n < BigInt(min) || n > BigInt(Number.MAX_SAFE_INTEGER))
    throw new UsageError(
      `--${name} must be a size of at least ${String(min)} bytes, such as 536870912, 512m, 1G or 1GiB (got ${JSON.stringify(v)})`,
    );
  return Number(n);
}
