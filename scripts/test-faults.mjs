#!/usr/bin/env node
// `npm run test:faults [-- [--not[=]]FRAGMENT...]` (root, as CI runs it): the heavy fault battery of the
// store and snapshots, kept out of `npm test` for its length. The crash test (SIGKILL at every write
// step) again, this time in a directory on a real disk rather than tmpfs
// (packages/host/test/store/crash.test.ts); then every packages/*/test/faults/*.faults.ts (identical
// concurrent appends, a read-only bind mount, a full tmpfs, 100,000-file and 1,000-deep workspaces,
// SIGKILL of sbx at every step of the durable lifecycle). SBX_CRASH_DIR chooses the disk directory
// (default /var/tmp).
//
// With fragments, only the files whose path holds one of them; with `--not FRAGMENT` (or `--not=FRAGMENT`),
// every file but those. CI runs the battery in two parts side by side, one naming its files and the other `--not`
// the same ones, so every file runs exactly once whatever is added later.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const REAL_DISK = "packages/host/test/store/crash.test.ts";
const files = [REAL_DISK];
for (const pkg of readdirSync("packages").sort()) {
  const dir = join("packages", pkg, "test", "faults");
  let names = [];
  try {
    names = readdirSync(dir).sort();
  } catch {
    continue;
  }
  for (const n of names) if (n.endsWith(".faults.ts")) files.push(join(dir, n));
}

const want = [];
const not = [];
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i].startsWith("--not=")) not.push(args[i].slice("--not=".length));
  else if (args[i] === "--not") {
    if (args[i + 1] === undefined) {
      console.error("test:faults: --not needs a fragment");
      process.exit(2);
    }
    not.push(args[++i]);
  } else want.push(args[i]);
}
const holds = (f, frags) => frags.some((s) => f.includes(s));
for (const frag of [...want, ...not])
  if (!files.some((f) => f.includes(frag))) {
    console.error(`test:faults: no fault test file's path holds ${JSON.stringify(frag)}`);
    process.exit(2);
  }
const chosen = files.filter((f) => (want.length === 0 || holds(f, want)) && !holds(f, not));
console.log(`test:faults: ${chosen.length} of ${files.length} files: ${chosen.join(" ")}`);

const run = (list, env = {}) =>
  spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", ...list], {
    stdio: "inherit",
    env: { ...process.env, ...env },
  }).status ?? 1;
let status = 0;
if (chosen.includes(REAL_DISK)) {
  const disk = mkdtempSync(join(process.env.SBX_CRASH_DIR ?? "/var/tmp", "sbx-faults-"));
  status = run([REAL_DISK], { SBX_CRASH_DIR: disk, SBX_CRASH_REAL_DISK: "1" });
  rmSync(disk, { recursive: true, force: true });
}
// The rest runs even when the real-disk crash test failed: one failure never hides another.
const rest = chosen.filter((f) => f !== REAL_DISK);
if (rest.length > 0) {
  const s = run(rest);
  status ||= s;
}
process.exit(status);
