// The shape every `sbx` / `jcp` subcommand has, and the exit codes they share.
import { parseArgs, type ParseArgsConfig } from "node:util";

/** Exit codes of every command (documented in the README and in each --help). */
export const EXIT = {
  /** Success; for verification, the input is valid. */
  ok: 0,
  /** The input was read and is invalid, or the operation was refused. */
  invalid: 1,
  /** Usage error or unusable input (missing file, unreadable key, malformed JSON). */
  usage: 2,
} as const;

/** Where a command writes; tests pass buffers, the binaries pass the process streams. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
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

/** UsageError is thrown by option parsing; the dispatcher prints it with the command's help. */
export class UsageError extends Error {
  override readonly name = "UsageError";
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
