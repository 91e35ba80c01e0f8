// §5.5.5 The helper protocol (see native/loop.c): text lines, one message each.
import type { Readable } from "node:stream";
import type { StatKey } from "./hash.ts";

/** A message from the helper. */
export type HelperMessage =
  | { readonly kind: "ready"; readonly sandboxPid: number; readonly marked: number }
  | { readonly kind: "miss"; readonly id: number; readonly path: string; readonly key: StatKey }
  | {
      readonly kind: "decision";
      readonly allowed: boolean;
      readonly route: "direct" | "interpreter" | "loader";
      readonly source: "cache" | "hash" | "timeout";
      /** The id of the verdict (the answered miss) that decided; 0 for a timeout. */
      readonly verdict: number;
      readonly pid: number;
      readonly path: string;
    }
  | {
      readonly kind: "exit";
      readonly code: number | null;
      readonly signal: number;
      readonly stats: GateStats;
    };

/** Counters the helper reports when the sandbox ends. */
export interface GateStats {
  readonly hits: number;
  readonly misses: number;
  readonly denies: number;
  readonly timeouts: number;
  /** The helper's own CPU time (user + system), microseconds. */
  readonly helperCpuUs: number;
  /** Execs the kernel let through under an ignore mask (journaled from their notice). */
  readonly kernelHits: number;
  /** Ignore masks the helper set for execs. */
  readonly marks: number;
  /** Permission events the helper answered for the sandbox (each one a process waited on). */
  readonly permissionEvents: number;
}

function keyAt(f: readonly string[], i: number): StatKey {
  const n = (j: number) => BigInt(f[i + j] ?? "0");
  const ns = (s: bigint, frac: bigint) => s * 1_000_000_000n + frac;
  return { dev: n(0), ino: n(1), size: n(2), mtimeNs: ns(n(3), n(4)), ctimeNs: ns(n(5), n(6)) };
}

/**
 * The path of a decision whose file's path the kernel could not give (§5.5.6): the decision is still
 * journaled, under a name no absolute path can have.
 */
export const UNKNOWN_PATH = "(unknown)";

const ROUTES = { direct: "direct", interpreter: "interpreter", loader: "loader" } as const;
const SOURCES = { c: "cache", n: "hash", t: "timeout" } as const;

/** parseHelperLine reads one protocol line; null for a line it does not know. */
export function parseHelperLine(line: string): HelperMessage | null {
  const f = line.split(" ");
  switch (f[0]) {
    case "r":
      return { kind: "ready", sandboxPid: Number(f[1]), marked: Number(f[2]) };
    case "m":
      return { kind: "miss", id: Number(f[1]), path: f[2] ?? "", key: keyAt(f, 3) };
    case "d": {
      const route = ROUTES[f[2] as keyof typeof ROUTES];
      const source = SOURCES[f[3] as keyof typeof SOURCES];
      const hex = f[6] ?? "-";
      return {
        kind: "decision",
        allowed: f[1] === "1",
        route,
        source,
        verdict: Number(f[4]),
        pid: Number(f[5]),
        path: hex === "-" ? UNKNOWN_PATH : Buffer.from(hex, "hex").toString(),
      };
    }
    case "x": {
      const code = Number(f[1]);
      const [hits, misses, denies, timeouts, helperCpuUs, kernelHits, marks, permissionEvents] = f
        .slice(3, 11)
        .map(Number) as [number, number, number, number, number, number, number, number];
      return {
        kind: "exit",
        code: code < 0 ? null : code,
        signal: Number(f[2]),
        stats: { hits, misses, denies, timeouts, helperCpuUs, kernelHits, marks, permissionEvents },
      };
    }
    default:
      return null;
  }
}

/**
 * onLines calls `f` with each line the helper writes on `input`, in order. The helper batches its
 * lines (native/lines.c), so a chunk holds many; every line is ASCII (paths travel as hex).
 */
export function onLines(input: Readable, f: (line: string) => void): void {
  let rest = "";
  input.on("data", (chunk: Buffer) => {
    const text = rest + chunk.toString("latin1");
    let at = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", at)) {
      f(text.slice(at, nl));
      at = nl + 1;
    }
    rest = text.slice(at);
  });
}

/** verdictLine renders the answer to a miss. */
export function verdictLine(id: number, allowed: boolean, elf: boolean, loader: boolean): string {
  return `v ${id} ${allowed ? 1 : 0} ${elf ? 1 : 0} ${loader ? 1 : 0}\n`;
}
