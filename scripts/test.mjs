#!/usr/bin/env node
// Runs every scripts/test/**/*.test.ts and packages/*/test/**/*.test.ts file under node's test runner
// with tsx (or those whose path holds one of the arguments). Node 20's --test takes no globs, so the files are listed here.
// First compiles the CLIs (scripts/build.mjs cli), so a test that spawns `sbx` or `jcp` runs the
// current sources.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

function walk(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}
const built = spawnSync(process.execPath, [join(import.meta.dirname, "build.mjs"), "cli"], {
  stdio: "inherit",
});
if (built.status !== 0) process.exit(built.status ?? 1);

const filter = process.argv.slice(2);
const files = [];
walk(join("scripts", "test"), files);
for (const pkg of readdirSync("packages").sort()) {
  const dir = join("packages", pkg, "test");
  try {
    walk(dir, files);
  } catch {
    /* package without tests */
  }
}
const chosen = filter.length ? files.filter((f) => filter.some((s) => f.includes(s))) : files;
const r = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", ...chosen], {
  stdio: "inherit",
});
process.exit(r.status ?? 1);
