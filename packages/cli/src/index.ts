// @sbx/cli: the dispatcher behind the `sbx` and `jcp` bins, for callers that run a command in
// process (the demo, tests) with their own output sinks.
export { runCli, loadCommands } from "./main.ts";
export type { Tool } from "./main.ts";
export type { Command, Io } from "./command.ts";
