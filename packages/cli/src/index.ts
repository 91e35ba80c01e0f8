// @sbx/cli: the dispatcher behind the `sbx` and `jcp` bins, for callers that run a command in
// process (the demo, tests) with their own output sinks.
export { runCli, loadCommands } from "./main.ts";
export type { Tool } from "./main.ts";
export type { Command, Io } from "./command.ts";
// Spending on a ledger folder from a verified state (jcp §4.3), for benches of the spend path.
export { verifiedLedger, spendOn } from "@sbx/host/ledger";
export type { VerifiedLedger, SpendResult } from "@sbx/host/ledger";
