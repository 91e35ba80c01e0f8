#!/usr/bin/env node
// Build step: compiles the project's own native helper (the exec gate, §5.5) with the machine's C
// compiler when its source exists. No prebuilt binary is downloaded. TypeScript runs through tsx.
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";

const helper = "packages/host/native/build.sh";
if (existsSync(helper)) {
  const r = spawnSync("bash", [helper], { stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
