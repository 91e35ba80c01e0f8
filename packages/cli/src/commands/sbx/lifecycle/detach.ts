// --detach: the same command again as a background child (its own session, no terminal), which
// becomes the run's supervisor; the parent waits only until the child has the run going and says
// its id on a pipe (fd 3), prints it and exits. The child's output goes to a log file in the
// store's live/ folder. A child that ends before saying an id fails the command with its log.
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Readable } from "node:stream";
import { EXIT, type Io } from "../../../command.ts";
import { openAnyRunStore, storeArgOf } from "../../../runstore.ts";

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
  const id = await new Promise<string | null>((resolve) => {
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
  if (id === null || id === "") {
    io.err(`sbx: the detached supervisor ended before the run started; its log (${log}):`);
    for (const l of readFileSync(log, "utf8").trimEnd().split("\n").slice(-20)) io.err(`  ${l}`);
    return EXIT.invalid;
  }
  io.out(`run ${id}`);
  io.err(`sbx: supervised in the background by pid ${String(child.pid)}; log ${log}`);
  return EXIT.ok;
}

/** notifyDetached tells a waiting parent (spawnDetached) the run id, once; a no-op in the foreground. */
export function notifyDetached(id: string): void {
  if (process.env.SBX_DETACH_NOTIFY !== "3") return;
  delete process.env.SBX_DETACH_NOTIFY;
  try {
    writeSync(3, `${id}\n`);
    closeSync(3);
  } catch {
    // the parent is gone: nothing to tell
  }
}
