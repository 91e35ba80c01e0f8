// Test support: the worker processes of the race tests (spend, mint, resume, in one namespace or
// two). Each prints "ready" once it is poised, waits for the test's go file, races, and prints its
// results as JSON lines. Shared by packages/host/test and packages/cli/test (a test may use the test
// fixtures of a package below it, scripts/layers.mjs).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** A started worker: `ready` once it says so; `done` with the JSON lines it printed, in order. */
export interface LineWorker<T> {
  readonly ready: Promise<void>;
  readonly done: Promise<T[]>;
}

/** tsxArgv: the argv (program first) that runs the TypeScript worker `script` under tsx in this Node. */
export function tsxArgv(script: string, args: readonly string[]): string[] {
  return [process.execPath, "--import", "tsx", script, ...args];
}

/**
 * lineWorker starts `argv` (program first) with `env`, stdin ignored, stderr inherited. A stdout
 * line "ready" resolves `ready`; every other line is one JSON value. `done` resolves those values
 * when the process exits 0, and rejects with `${what} exited CODE` otherwise (or when it could not
 * start).
 */
export function lineWorker<T>(
  argv: readonly string[],
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): LineWorker<T> {
  const [file, ...args] = argv;
  if (file === undefined) throw new RangeError("lineWorker: argv is empty");
  const child = spawn(file, args, { stdio: ["ignore", "pipe", "inherit"], env });
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => (onReady = r));
  const values: T[] = [];
  createInterface({ input: child.stdout }).on("line", (l) => {
    if (l === "ready") onReady();
    else values.push(JSON.parse(l) as T);
  });
  const done = new Promise<T[]>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(values) : reject(new Error(`${what} exited ${String(code)}`)),
    );
  });
  return { ready, done };
}

/** lastTally: a worker's one tally line (its last JSON line), or an empty tally when it printed none. */
export function lastTally(values: readonly Record<string, number>[]): Record<string, number> {
  return values[values.length - 1] ?? {};
}
