// --detach: the same command again as a background child (its own session, no terminal), which
// becomes the run's supervisor; the parent waits only until the child has the run going and says
// its id on a pipe (fd 3), prints it and exits. The child's output goes to a log file in the
// store's live/ folder. What crosses the pipe is one JSON line: `{"id": …}`, or the child's
// refusal as `{"error": {code, message, detail}}` (errorToJson), which the parent rebuilds
// (errorFromJson) and throws, so `sbx run --detach` exits with the code the child refused with, as
// the same command in the foreground would; no code is read out of the log's text. A child that
// ends without saying either fails the command with its log.
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Readable } from "node:stream";
import { errorFromJson, errorToJson, isCodedError, parseStrict } from "@sbx/wire";
import { EXIT, type Io } from "../../../command.ts";
import { openAnyRunStore, storeArgOf } from "@sbx/host/stores";

const NOTIFY = "SBX_DETACH_NOTIFY";

/** sbxBin finds bin/sbx.mjs of this package, from src/ (tsx) or from dist/ (bundled chunks). */
function sbxBin(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const bin = join(dir, "bin", "sbx.mjs");
    if (existsSync(bin)) return bin;
    dir = dirname(dir);
  }
  throw new Error("cannot find bin/sbx.mjs of the sbx package");
}

/**
 * spawnDetached runs `sbx <args without --detach>` in the background and prints the run id the
 * child reports. `args` is the command line after `sbx` (e.g. ["run", …] or ["resume", …]).
 */
export async function spawnDetached(
  storeGiven: string | undefined,
  args: readonly string[],
  io: Io,
): Promise<number> {
  const store = await openAnyRunStore(storeGiven, true);
  mkdirSync(join(store.root, "live"), { recursive: true, mode: 0o700 });
  const log = join(
    store.root,
    "live",
    `detached-${String(process.pid)}-${randomBytes(4).toString("hex")}.log`,
  );
  const cut = args.indexOf("--");
  const own = (cut < 0 ? args : args.slice(0, cut)).filter((a) => a !== "--detach");
  const rest = cut < 0 ? [] : args.slice(cut);
  const fd = openSync(log, "a", 0o600);
  const child = spawn(process.execPath, [sbxBin(), ...own, "--store", storeArgOf(store), ...rest], {
    detached: true,
    stdio: ["ignore", fd, fd, "pipe"],
    env: { ...process.env, [NOTIFY]: "3" },
  });
  closeSync(fd);
  const pipe = child.stdio[3] as Readable;
  let text = "";
  pipe.setEncoding("utf8");
  const line = await new Promise<string | null>((resolve) => {
    pipe.on("data", (d: string) => {
      text += d;
      if (text.includes("\n")) resolve(text.split("\n")[0] ?? null);
    });
    pipe.on("error", () => resolve(null));
    pipe.on("close", () => resolve(null));
    child.on("exit", () => resolve(null));
  });
  pipe.destroy();
  child.unref();
  const told = toldOf(line);
  if (!("id" in told)) {
    io.err(`sbx: the detached supervisor ended before the run started; its log (${log}):`);
    for (const l of readFileSync(log, "utf8").trimEnd().split("\n").slice(-20)) io.err(`  ${l}`);
    if ("error" in told) throw told.error;
    return EXIT.invalid;
  }
  const id = told.id;
  io.out(`run ${id}`);
  io.err(`sbx: supervised in the background by pid ${String(child.pid)}; log ${log}`);
  return EXIT.ok;
}

/** What the child said on the pipe: the run's id, its refusal rebuilt, or nothing usable. */
type Told = { readonly id: string } | { readonly error: Error } | { readonly nothing: true };

/** toldOf reads the child's line (strict JSON): `{id}` or `{error}`; anything else is nothing. */
function toldOf(line: string | null): Told {
  if (line === null || line === "") return { nothing: true };
  let v: unknown;
  try {
    v = parseStrict(new TextEncoder().encode(line));
  } catch {
    return { nothing: true };
  }
  const o = v as { id?: unknown; error?: unknown } | null;
  if (typeof o?.id === "string" && o.id !== "") return { id: o.id };
  if (o?.error === undefined) return { nothing: true };
  try {
    return { error: errorFromJson(o.error) };
  } catch {
    return { nothing: true };
  }
}

/** tell writes one line to a waiting parent (spawnDetached), once; a no-op in the foreground. */
function tell(value: { id: string } | { error: ReturnType<typeof errorToJson> }): void {
  if (process.env.SBX_DETACH_NOTIFY !== "3") return;
  delete process.env.SBX_DETACH_NOTIFY;
  try {
    writeSync(3, `${JSON.stringify(value)}\n`);
    closeSync(3);
  } catch {
    // the parent is gone: nothing to tell
  }
}

/** notifyDetached tells a waiting parent (spawnDetached) the run id, once; a no-op in the foreground. */
export function notifyDetached(id: string): void {
  tell({ id });
}

/**
 * asDetachedChild runs `fn`, the work of a detached child before it says its run id; a coded error
 * it throws is told to the waiting parent as `{code, message, detail}`, then rethrown (the child
 * still logs it and exits with it). An error with no code is not told: the parent shows the log.
 */
export async function asDetachedChild<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isCodedError(e)) tell({ error: errorToJson(e) });
    throw e;
  }
}
