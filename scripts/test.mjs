#!/usr/bin/env node
// `npm test [-- FRAGMENT...]`: every scripts/test/**/*.test.ts and packages/*/test/**/*.test.ts file
// (or those whose path holds one of the fragments) under node's test runner with tsx. Node 20's
// --test takes no globs, so the files are listed here. `npm test` builds first (scripts/build.mjs,
// a no-op while the build is current), so a test that spawns `sbx` or `jcp` runs the current sources.
//
// Files run side by side, SBX_TEST_CONCURRENCY at a time (default 2, one per core of CI's machine: at
// 3, under load, two timing-bound tests failed, the granted crash test's resume and the two-claimant
// pool test), except those in ALONE below, which run afterwards one
// at a time. At the end: the slowest 15 files with their times, and one total line.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

/**
 * Test files that must not run beside any other file, matched by path substring, each with the
 * reason. Everything else may share the machine with any other file.
 */
const ALONE = [
  // Their assertions are about the machine's own limits or timing: another file's load breaks them.
];

function walk(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}

function testFiles() {
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
  return files;
}

/** One node --test run of files, n at a time; returns its status and its summary. */
function runFiles(files, n, scratch, label) {
  if (files.length === 0) return { status: 0, summary: { files: {}, passed: 0, failed: 0, skipped: 0 } };
  const out = join(scratch, `${label}.json`);
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--test",
      `--test-concurrency=${n}`,
      "--test-reporter=tap",
      "--test-reporter-destination=stdout",
      `--test-reporter=${join(import.meta.dirname, "test-slowest.mjs")}`,
      `--test-reporter-destination=${out}`,
      ...files,
    ],
    { stdio: "inherit" },
  );
  let summary;
  try {
    summary = JSON.parse(readFileSync(out, "utf8"));
  } catch {
    summary = { files: {}, passed: 0, failed: 1, skipped: 0 };
  }
  return { status: r.status ?? 1, summary };
}

const built = spawnSync(process.execPath, [join(import.meta.dirname, "build.mjs"), "cli"], {
  stdio: "inherit",
});
if (built.status !== 0) process.exit(built.status ?? 1);

const filter = process.argv.slice(2);
const all = testFiles();
const chosen = filter.length ? all.filter((f) => filter.some((s) => f.includes(s))) : all;
if (chosen.length === 0) {
  console.error(`test: no test file's path holds ${filter.map((f) => JSON.stringify(f)).join(" or ")}`);
  process.exit(2);
}
const alone = chosen.filter((f) => ALONE.some(([frag]) => f.includes(frag)));
const shared = chosen.filter((f) => !alone.includes(f));
const n = Number(process.env.SBX_TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(n) || n < 1) {
  console.error(
    `test: SBX_TEST_CONCURRENCY must be a whole number of at least 1, got ${process.env.SBX_TEST_CONCURRENCY}`,
  );
  process.exit(2);
}
// The real Debian image (scripts/test-image.sh, built once per machine and cached): CI builds it in a
// step of its own; without SBX_TEST_DEBIAN_IMAGE it is built here, for the files that run on it.
if (process.env.SBX_TEST_DEBIAN_IMAGE === undefined && chosen.some((f) => f.includes("image-debian"))) {
  const img = spawnSync("sh", [join(import.meta.dirname, "test-image.sh")], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
  });
  const m = /^export SBX_TEST_DEBIAN_IMAGE=(.+)$/m.exec(img.stdout);
  if (img.status === 0 && m) process.env.SBX_TEST_DEBIAN_IMAGE = m[1];
  else
    console.error(
      "test: the Debian test image could not be built (scripts/test-image.sh); its tests will say so",
    );
}
const scratch = mkdtempSync(join(tmpdir(), "sbx-test-"));
const runs = [runFiles(shared, n, scratch, "shared"), runFiles(alone, 1, scratch, "alone")];
rmSync(scratch, { recursive: true, force: true });

const times = runs.flatMap((r) => Object.entries(r.summary.files)).sort((a, b) => b[1] - a[1]);
console.log(`# slowest ${Math.min(15, times.length)} of ${times.length} test files (seconds)`);
for (const [file, ms] of times.slice(0, 15)) console.log(`# ${(ms / 1000).toFixed(1).padStart(7)}  ${file}`);
const sum = (k) => runs.reduce((t, r) => t + r.summary[k], 0);
console.log(`npm test: ${sum("passed")} passed, ${sum("failed")} failed, ${sum("skipped")} skipped`);
process.exit(runs.find((r) => r.status !== 0)?.status ?? 0);
