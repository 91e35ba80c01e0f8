// §5.5.5 for a durable run (§13): one exec gate held over a live sandbox for its whole life, across
// every interval. The gate attaches before the command runs (the sandbox's inner stage waits for
// it), as runUnit's gate does; its decisions are journaled into whichever interval is open. An
// exec that was waiting for the gate's answer when the sandbox froze is decided while no interval
// is open: its decision is held and journaled first in the next interval, where the exec goes on
// (a run released instead never runs it). More held decisions than MAX_HELD fail closed: the gate
// stops the sandbox. A gate that ends before the sandbox kills it: nothing runs ungated.
import { Journal, type JournalEvent, type EventInput } from "@sbx/sandbox-attest/journal";
import type { ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import type { JsonObject } from "@sbx/wire";
import { startGate, type GateOptions, type GateResult, type GateSession } from "../gate/session.ts";
import { HostError } from "../errors.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";

/** The most decisions held while no interval is open. */
export const MAX_HELD = 256;

/** A journal that hands every event to the interval journal open now, or holds it for the next. */
export class IntervalJournal extends Journal {
  readonly #target: () => Journal | null;
  readonly #held: (EventInput | JsonObject)[] = [];

  constructor(target: () => Journal | null) {
    super();
    this.#target = target;
  }

  override append(input: EventInput | JsonObject): JournalEvent {
    const j = this.#target();
    if (j !== null) return j.append(input);
    if (this.#held.length >= MAX_HELD)
      throw new HostError(
        "RunNotLive",
        `more than ${String(MAX_HELD)} exec decisions while no interval was open`,
      );
    const checked = new Journal().append(input); // checked now (§8.2); numbered where it lands
    this.#held.push(input);
    return checked;
  }

  /** flushInto journals the held decisions first in the interval just opened. */
  flushInto(j: Journal): void {
    for (const e of this.#held.splice(0)) j.append(e);
  }
}

/** A gate held over a live sandbox. */
export interface HeldGate {
  /** True while the gate has held since before the command ran and has not ended. */
  readonly alive: () => boolean;
  /** Resolves once the gate ended: true when it ended cleanly (held to the sandbox's end). */
  readonly ended: Promise<boolean>;
  readonly marked: number;
  stop(): void;
}

/** What attachLiveGate needs besides the sandbox. */
export interface LiveGateOptions {
  readonly policy: ExecPolicy;
  readonly pid: number;
  readonly journal: Journal;
  readonly gateOptions?: Pick<GateOptions, "loaders" | "timeoutMs" | "stallMs" | "env" | "helper">;
}

/**
 * attachLiveGate attaches the exec gate to the gated sandbox `sb` (started with `gated: true`) and
 * then lets its command run. Refuses, with the sandbox stopped and nothing run: a sandbox that
 * ended before it was ready (`SandboxFailed`), a gate that cannot attach (startGate's codes,
 * `GateFailed`). Once attached, a gate that ends or fails to journal kills the sandbox.
 */
export async function attachLiveGate(sb: Sandbox, o: LiveGateOptions): Promise<HeldGate> {
  if (!(await sb.ready)) {
    sb.proceed(false);
    sb.signal("SIGKILL");
    throw new HostError("SandboxFailed", "the gated sandbox ended before its gate could attach");
  }
  let gate: GateSession;
  try {
    gate = await startGate({
      ...o.gateOptions,
      policy: o.policy,
      command: [],
      attach: o.pid,
      journal: o.journal,
    });
  } catch (e) {
    sb.proceed(false);
    sb.signal("SIGKILL");
    throw e;
  }
  let alive = true;
  const ended = gate.done
    .catch((): GateResult | null => null)
    .then((r) => {
      alive = false;
      const clean = r !== null && r.stats !== null && r.helperCode === 0;
      if (r === null || r.stats === null) sb.signal("SIGKILL");
      return clean;
    });
  sb.proceed(true);
  return {
    alive: () => alive,
    ended,
    marked: gate.marked,
    stop: () => {
      gate.stop();
    },
  };
}
