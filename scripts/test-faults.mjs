#!/usr/bin/env node
// `npm run test:faults` (root, as CI runs it): the heavy fault battery of the store and snapshots,
// kept out of `npm test` for its length. The crash test (SIGKILL at every write step) again, this
// time in a directory on a real disk rather than tmpfs; then every packages/*/test/faults/*.faults.ts
// (identical concurrent appends, a read-only bind mount, a full tmpfs, 100,000-file and
// 1,000-deep workspaces). SBX_CRASH_DIR chooses the disk directory (default /var/tmp).
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const files = [];
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
const disk = mkdtempSync(join(process.env.SBX_CRASH_DIR ?? "/var/tmp", "sbx-faults-"));
const run = (args, env = {}) =>
  spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", ...args], {
    stdio: "inherit",
    env: { ...process.env, ...env },
  }).status ?? 1;
let status = run(["packages/host/test/store/crash.test.ts"], {
  SBX_CRASH_DIR: disk,
  SBX_CRASH_REAL_DISK: "1",
});
rmSync(disk, { recursive: true, force: true });
status ||= run(files);
process.exit(status);
