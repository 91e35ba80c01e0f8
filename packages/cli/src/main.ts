// Dispatcher for `sbx` and `jcp`: discovers the commands in ./commands/<tool>, prints help and
// version, runs one command, and maps errors to exit codes (0 ok, 1 invalid/refused, 2 usage).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Command, Io } from "./command.ts";

const here = dirname(fileURLToPath(import.meta.url));
// Command modules share this module's extension: .ts in src/, .js in dist/ (scripts/build.mjs).
const ext = extname(fileURLToPath(import.meta.url));
const TOOLS = {
  sbx: "sandbox-attest host: run units under grants, meter, attest, journal, suspend and resume, verify records",
  jcp: "JCP grant protocol: issue, attenuate, verify and spend capability grants",
} as const;
/** A tool name. */
export type Tool = keyof typeof TOOLS;

/**
 * loadCommands imports the command modules of a tool, sorted by name: every one, or with `word`
 * only those the build's index (scripts/build.mjs, dist/commands/<tool>/index.json) says define a
 * command whose name starts with it. Without an index (run from the sources) or with a word it
 * does not hold, every module.
 */
export async function loadCommands(tool: Tool, word?: string): Promise<Command[]> {
  const dir = join(here, "commands", tool);
  const out: Command[] = [];
  const only = word === undefined ? undefined : indexed(dir, word);
  for (const f of only ?? readdirSync(dir).sort())
    if (f.endsWith(ext)) {
      const mod = (await import(pathToFileURL(join(dir, f)).href)) as {
        command?: Command;
        commands?: Command[];
      };
      if (mod.command) out.push(mod.command);
      if (mod.commands) out.push(...mod.commands);
    }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

function indexed(dir: string, word: string): string[] | undefined {
  let index: Record<string, string[]>;
  try {
    index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as Record<string, string[]>;
  } catch {
    return undefined;
  }
  return Object.hasOwn(index, word) ? index[word] : undefined;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(join(here, "../package.json"), "utf8")) as { version: string };
  return pkg.version;
}

function toolHelp(tool: Tool, cmds: readonly Command[]): string {
  const w = Math.max(...cmds.map((c) => c.name.length), 8);
  return [
    `${tool}: ${TOOLS[tool]}`,
    "",
    `usage: ${tool} <command> [options]     ${tool} <command> --help for a command's options`,
    "",
    "commands:",
    ...cmds.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`),
    "",
    "options: --help, --version",
    "exit codes: 0 success / valid, 1 invalid or refused, 2 usage error or unusable input",
  ].join("\n");
}

/** findCommand picks the longest command name that prefixes the arguments ("policy add" before "policy"). */
function findCommand(cmds: readonly Command[], argv: readonly string[]): [Command, string[]] | null {
  let best: [Command, string[]] | null = null;
  for (const c of cmds) {
    const words = c.name.split(" ");
    if (words.every((w, i) => argv[i] === w) && (!best || words.length > best[0].name.split(" ").length))
      best = [c, argv.slice(words.length)];
  }
  return best;
}

/** runCli runs one invocation of a tool and returns its exit code. */
export async function runCli(tool: Tool, argv: string[], given?: Io): Promise<number> {
  // The version needs no command module, nor the libraries command.ts brings in (the wire package
  // with its BLAKE3 and Ed25519): answered before anything loads, so it starts fast.
  if (argv[0] === "--version" || argv[0] === "-V") {
    const line = `${tool} ${version()}`;
    if (given) given.out(line);
    else process.stdout.write(`${line}\n`);
    return 0;
  }
  const { EXIT, processIo, runCommand } = await import("./command.ts");
  const io = given ?? processIo();
  const help = argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help";
  const cmds = await loadCommands(tool, help ? undefined : argv[0]);
  if (help) {
    io.out(toolHelp(tool, cmds));
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  const found = findCommand(cmds, argv);
  if (!found) {
    io.err(`${tool}: unknown command ${JSON.stringify(argv.join(" "))}; see ${tool} --help`);
    return EXIT.usage;
  }
  const [cmd, rest] = found;
  return runCommand(tool, cmd, rest, io);
}
