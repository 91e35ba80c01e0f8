// What an attestation the page could not verify says of its interval (issue 38): read from the
// envelope's payload without trusting it, so the page still shows the segment's time, marked
// unverified, rather than an empty cell. Nothing read here counts toward any verdict.
import { fromBase64, parseStrict } from "@sbx/wire";

/** An interval as an unverified attestation states it (sandbox-attest §7.2 `interval`). */
export interface StatedInterval {
  readonly start_ms: number;
  readonly end_ms: number;
}

const isTime = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** statedInterval reads `predicate.interval` from a parsed DSSE envelope; null when it has none readable. */
export function statedInterval(env: unknown): StatedInterval | null {
  const payload = (env as { payload?: unknown } | null)?.payload;
  if (typeof payload !== "string") return null;
  const bytes = fromBase64(payload);
  if (bytes === null) return null;
  let st: unknown;
  try {
    st = parseStrict(bytes);
  } catch {
    return null;
  }
  const i = (st as { predicate?: { interval?: { start_ms?: unknown; end_ms?: unknown } } } | null)?.predicate
    ?.interval;
  if (!isTime(i?.start_ms) || !isTime(i.end_ms) || i.end_ms < i.start_ms) return null;
  return { start_ms: i.start_ms, end_ms: i.end_ms };
}
