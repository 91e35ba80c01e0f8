// The shape every `sbx` / `jcp` subcommand has, the exit codes they share, and how one invocation of
// a command is run: --help before `--` only, errors reported as one line by their class and code
// (never parsed out of a message), and standard output that ends quietly when its reader goes away.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { isCodedError, type CodedError } from "@sbx/wire";
import { CliError, isCliError } from "./errors.ts";
import { systemReason } from "@sbx/host/files";

/** Exit codes of every command (documented in the README and in each --help). */
export const EXIT = {
  /** Success; for verification, the input is valid. */
  ok: 0,
  /** The input was read and is invalid, or the operation was refused. */
  invalid: 1,
  /** Usage error or unusable input (missing file, a directory for a file, unwritable output, …). */
  usage: 2,
} as const;

/** Where a command writes; tests pass buffers, the binaries pass the process streams. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Raw bytes (a child's output, passed through); when absent, written as text lines. */
  bytes?(to: "out" | "err", data: Uint8Array): void;
}

/** One subcommand, discovered from `commands/<tool>/<name>.ts` (its `command` export). */
export interface Command {
  /** The word after the tool, e.g. "keygen"; nested commands use a space, e.g. "policy add". */
  readonly name: string;
  /** One line for the tool's command list. */
  readonly summary: string;
  /** The full --help text. */
  readonly help: string;
  /** Runs with the arguments after the command name; returns an exit code from EXIT. */
  run(args: string[], io: Io): Promise<number>;
}

/** UsageError is a CliError with code `Usage`: a bad command line (exit 2). */
export class UsageError extends CliError {
  constructor(message: string) {
    super("Usage", message);
  }
}

/** parseOptions wraps node:util parseArgs, turning its errors into UsageError. */
export function parseOptions<T extends NonNullable<ParseArgsConfig["options"]>>(
  args: string[],
  options: T,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** printJson writes a value as indented JSON on one output. */
export function printJson(io: Io, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}

/** writeBytes passes raw bytes to `to`, as text lines where the Io takes no bytes. */
export function writeBytes(io: Io, to: "out" | "err", data: Uint8Array): void {
  if (data.length === 0) return;
  if (io.bytes) io.bytes(to, data);
  else io[to](Buffer.from(data).toString("utf8").replace(/\n$/, ""));
}

/** ownArgs are the arguments before `--`: those after it belong to the command being run. */
export function ownArgs(args: readonly string[]): readonly string[] {
  const i = args.indexOf("--");
  return i < 0 ? args : args.slice(0, i);
}

let processStreams: Io | null = null;

/**
 * processIo returns the Io of the process's own streams. A reader that goes away (EPIPE, as in
 * `sbx … | head`) silences that stream: the command still finishes and exits with its own code,
 * with no stack trace and no further writes.
 */
export function processIo(): Io {
  if (processStreams) return processStreams;
  const closed = { out: false, err: false };
  const stream = { out: process.stdout, err: process.stderr };
  for (const k of ["out", "err"] as const)
    stream[k].on("error", () => {
      closed[k] = true;
    });
  const write = (k: "out" | "err", data: string | Uint8Array) => {
    if (!closed[k]) stream[k].write(data);
  };
  processStreams = {
    out: (l) => {
      write("out", l + "\n");
    },
    err: (l) => {
      write("err", l + "\n");
    },
    bytes: write,
  };
  return processStreams;
}

/**
 * Host codes that mean the input cannot be used at all (exit 2), not that it was refused; told by
 * the code alone, so an error that crossed a process boundary (errorFromJson) exits the same.
 */
const UNUSABLE_HOST = new Set([
  "StoreUnusable",
  "GateUnavailable",
  "PoolMissing",
  "PoolItemNotParked",
  "PoolGrantUnsupported",
  "StoreUnreachable",
  "RunNotFound",
  "RunAmbiguous",
  "ImageUnnamed",
  "BadRunRef",
  "BadLedger",
  "BadGrantSet",
  "Unreadable",
  "NotAFile",
  "Unwritable",
  "OutputExists",
  "BadKeyFile",
  "KeyMismatch",
]);

/**
 * unusable: the error names the file it could not use (`detail.input` or `detail.output`, as the
 * host's files.ts and keys.ts give): exit 2 whatever its code, even a wire code of the strict parser.
 */
function unusable(e: CodedError): boolean {
  return typeof e.detail["input"] === "string" || typeof e.detail["output"] === "string";
}

/** A Node system error: errno code, the call that failed, and usually the path. */
interface SystemError extends Error {
  readonly code: string;
  readonly syscall: string;
  readonly path?: string;
}

function isSystemError(e: unknown): e is SystemError {
  const o = e as Partial<SystemError> | null;
  return e instanceof Error && typeof o?.code === "string" && typeof o.syscall === "string";
}

/**
 * errorExit reports an error as one line on `io.err` and returns its exit code: a CliError is a
 * usage error or unusable input (2, with a pointer to --help for a bad command line); any other coded
 * error (a library's refusal, thrown here or by another process and rebuilt by errorFromJson) is 1,
 * except host codes that say the input is unusable (2); a system error names its path (2); anything
 * else is 2.
 */
export function errorExit(prefix: string, e: unknown, io: Io): number {
  if (isCliError(e)) {
    const hint = e.code === "Usage" || e.code === "NoTrust" ? `; see ${prefix} --help` : "";
    io.err(`${prefix}: ${e.code === "Usage" ? e.reason : e.message}${hint}`);
    return EXIT.usage;
  }
  if (isCodedError(e)) {
    io.err(`${prefix}: ${e.message}`);
    return UNUSABLE_HOST.has(e.code) || unusable(e) ? EXIT.usage : EXIT.invalid;
  }
  if (isSystemError(e)) {
    io.err(`${prefix}: cannot ${e.syscall} ${e.path ?? ""}: ${systemReason(e.code)}`);
    return EXIT.usage;
  }
  io.err(`${prefix}: error: ${e instanceof Error ? e.message : String(e)}`);
  if (process.env.SBX_DEBUG && e instanceof Error && e.stack) io.err(e.stack);
  return EXIT.usage;
}

/**
 * runCommand runs one command with the arguments after its name: `--help`/`-h` before any `--`
 * prints its help (arguments after `--` belong to the command it runs); errors become one line and
 * an exit code (errorExit), never followed by the help text.
 */
export async function runCommand(tool: string, cmd: Command, args: string[], io: Io): Promise<number> {
  const own = ownArgs(args);
  if (own.includes("--help") || own.includes("-h")) {
    io.out(cmd.help);
    return EXIT.ok;
  }
  try {
    return await cmd.run(args, io);
  } catch (e) {
    return errorExit(`${tool} ${cmd.name}`, e, io);
  }
}
