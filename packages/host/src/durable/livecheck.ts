// jcp §4.3 budgets enforced live, for one interval of a durable run (§13): the same check runUnit
// makes of a one-shot run (../run/run.ts `live`, ../grants/live.ts), on the interval's own meter.
// Every period the meter is read without closing the interval and the check is given the
// interval's energy so far; the first code it returns stops the sandbox's processes (SIGTERM now,
// SIGKILL one period later). A meter that cannot be read stops them at once (MeterFailed: a
// budget that cannot be read is none).
import type { MeterReading } from "@sbx/sandbox-attest/energy";
import { watchLive, type LiveCheck } from "../run/run.ts";

/** The watch over one interval. */
export interface IntervalWatch {
  /** Ends the watch (the interval was sealed); a pending SIGKILL is not sent. */
  stop(): void;
  /** The code the processes were stopped for, or null. */
  stoppedFor(): string | null;
}

/** watchInterval: see the file comment (run/run.ts watchLive, with a grace of one period). */
export function watchInterval(
  live: LiveCheck,
  peek: () => MeterReading,
  signal: (s: NodeJS.Signals) => void,
): IntervalWatch {
  return watchLive(live, peek, signal);
}
