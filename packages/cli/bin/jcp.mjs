#!/usr/bin/env node
// `jcp`: the grant protocol commands. TypeScript sources run through tsx.
import { register } from "tsx/esm/api";
register();
const { runCli } = await import("../src/main.ts");
process.exitCode = await runCli("jcp", process.argv.slice(2));
