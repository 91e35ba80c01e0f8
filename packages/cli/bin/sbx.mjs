#!/usr/bin/env node
// `sbx`: the sandbox-attest host commands. TypeScript sources run through tsx.
import { register } from "tsx/esm/api";
register();
const { runCli } = await import("../src/main.ts");
process.exitCode = await runCli("sbx", process.argv.slice(2));
