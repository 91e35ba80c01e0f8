#!/usr/bin/env node
// `npm run mutate [-- MODULE...] [--concurrency N]`: StrykerJS mutation testing of the
// security-critical source (issue 39), not part of `npm test` or CI. docs/mutation.md holds the
// last scores, each surviving mutant's disposition, and the run times.
//
// A MODULE is a package (`wire`, `jcp-grant`, `sandbox-attest`) or one area of it
// (`wire/dsse`, `jcp-grant/grant`, `sandbox-attest/energy`, ...: a key of CRITICAL below, after
// the slash). With no MODULE every package runs, one after the other, smallest first.
//
// The tests are node:test files under tsx; Stryker's tap runner runs each test file as its own
// `node --import tsx FILE` (node writes TAP when its output is not a terminal), so coverage is
// per test file: each mutant runs only the files of its package that reach it. Mutation happens in
// place (`inPlace`), because a package's tests reach it both by relative path and by its workspace
// name, and that name resolves through the repository's own node_modules; Stryker puts the files
// back when it ends (do not commit while a run is going). Concurrency defaults to 1: the machine
// this runs on is shared.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Stryker } from "@stryker-mutator/core";

/** The reference run of the committed JCP vectors (C11–C21). */
const JCP_VECTORS = "packages/conformance/test/reference-jcp.test.ts";

/**
 * The security-critical files of each package, by area: what `npm run mutate` mutates (`mutate`,
 * globs under the package), and the test files that run against them (`tests`, path prefixes under
 * the package's test/), and `also`, test files elsewhere in the repository (paths from its root).
 * Only those tests: a package's every test file also reaches, say, its canonical JSON, and running
 * them all for each mutant would take hours on this machine. The jcp-grant areas add the reference
 * run of the committed JCP vectors, so a mutant a vector catches counts as killed.
 */
export const CRITICAL = {
  wire: {
    json: { mutate: ["src/json.ts"], tests: ["jcs.", "json-"] },
    ed25519: { mutate: ["src/ed25519.ts", "src/edpoint.ts"], tests: ["ed25519"] },
    dsse: { mutate: ["src/dsse.ts"], tests: ["dsse"] },
  },
  "jcp-grant": {
    contain: {
      mutate: [
        "src/grant/contain.ts",
        "src/grant/budget.ts",
        "src/grant/limits.ts",
        "src/grant/scope.ts",
        "src/grant/pattern.ts",
      ],
      tests: ["grant/"],
      also: [JCP_VECTORS],
    },
    verify: { mutate: ["src/grant/verify.ts", "src/grant/spend.ts"], tests: ["grant/"], also: [JCP_VECTORS] },
    revoke: { mutate: ["src/grant/revoke.ts"], tests: ["grant/"], also: [JCP_VECTORS] },
    standing: { mutate: ["src/standing/*.ts"], tests: ["standing/"], also: [JCP_VECTORS] },
    checkpoint: { mutate: ["src/checkpoint/*.ts"], tests: ["checkpoint/"], also: [JCP_VECTORS] },
  },
  "sandbox-attest": {
    runrecord: { mutate: ["src/runrecord/*.ts"], tests: ["runrecord/"] },
    attestation: { mutate: ["src/attestation/*.ts"], tests: ["attestation/"] },
    energy: { mutate: ["src/energy/*.ts"], tests: ["energy/"] },
    warmpool: { mutate: ["src/warmpool/*.ts"], tests: ["warmpool/"] },
    fleet: { mutate: ["src/fleet/*.ts"], tests: ["fleet/"] },
    manifest: { mutate: ["src/manifest/subset.ts"], tests: ["manifest/"] },
  },
};

/** Packages in the order a full run takes them: fewest critical lines first. */
const ORDER = ["wire", "jcp-grant", "sandbox-attest"];

/** parseArgs splits the command line into modules and a concurrency; refuses what it does not know. */
function parseArgs(argv) {
  const modules = [];
  let concurrency = 1;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--concurrency") {
      concurrency = Number(argv[++i]);
      if (!Number.isInteger(concurrency) || concurrency < 1)
        throw new RangeError("--concurrency: want N >= 1");
    } else if (arg.startsWith("-")) {
      throw new RangeError(`unknown option ${arg}`);
    } else {
      modules.push(parseModule(arg));
    }
  }
  return { modules: modules.length > 0 ? modules : ORDER.map((pkg) => ({ pkg, area: null })), concurrency };
}

/** parseModule reads `pkg` or `pkg/area`; refuses a package or area CRITICAL does not name. */
function parseModule(arg) {
  const [pkg, area = null, ...rest] = arg.split("/");
  const areas = CRITICAL[pkg];
  if (areas === undefined || rest.length > 0 || (area !== null && areas[area] === undefined)) {
    const known = ORDER.flatMap((p) => [p, ...Object.keys(CRITICAL[p]).map((a) => `${p}/${a}`)]);
    throw new RangeError(`unknown module ${arg}; want one of: ${known.join(", ")}`);
  }
  return { pkg, area };
}

/** testFilesOf lists a package's *.test.ts files, sorted. */
function testFilesOf(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) testFilesOf(p, out);
    else if (name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}

/** optionsFor builds the Stryker options of one module run. */
function optionsFor({ pkg, area }, concurrency) {
  const root = join("packages", pkg);
  const areas = area === null ? Object.values(CRITICAL[pkg]) : [CRITICAL[pkg][area]];
  const name = area === null ? pkg : `${pkg}-${area}`;
  const testDir = join(root, "test");
  const prefixes = areas.flatMap((a) => a.tests.map((t) => join(testDir, t)));
  return {
    testRunner: "tap",
    plugins: ["@stryker-mutator/tap-runner", "./scripts/mutate-ignore.mjs"],
    ignorers: ["error-message"],
    tap: {
      testFiles: [
        ...testFilesOf(testDir).filter((f) => prefixes.some((p) => f.startsWith(p))),
        ...new Set(areas.flatMap((a) => a.also ?? [])),
      ],
      nodeArgs: ["--import", "tsx", "-r", "{{hookFile}}", "{{testFile}}"],
      forceBail: true,
    },
    mutate: areas.flatMap((a) => a.mutate.map((f) => join(root, f))),
    coverageAnalysis: "perTest",
    inPlace: true,
    // In place, Stryker would otherwise write `// @ts-nocheck` into every file of the repository.
    disableTypeChecks: false,
    concurrency,
    timeoutMS: 20000,
    timeoutFactor: 2,
    // A mutant that no test reaches is a survivor here, not a separate class left out of the score.
    thresholds: { high: 90, low: 80, break: null },
    reporters: ["clear-text", "progress-append-only", "json", "html"],
    jsonReporter: { fileName: `reports/mutation/${name}.json` },
    htmlReporter: { fileName: `reports/mutation/${name}.html` },
    clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
    tempDirName: ".stryker-tmp",
    cleanTempDir: true,
    logLevel: "info",
  };
}

/** A run in place must start from committed files, so that what Stryker restores is what git has. */
function assertCleanSources(modules) {
  const paths = [...new Set(modules.map(({ pkg }) => join("packages", pkg, "src")))];
  const r = spawnSync("git", ["status", "--porcelain", "--", ...paths], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git status failed: ${r.stderr}`);
  if (r.stdout.trim() !== "") throw new Error(`uncommitted changes under ${paths.join(", ")}:\n${r.stdout}`);
}

async function main() {
  const { modules, concurrency } = parseArgs(process.argv.slice(2));
  if (!existsSync("packages/wire")) throw new Error("run from the repository root (npm run mutate)");
  assertCleanSources(modules);
  const times = [];
  for (const mod of modules) {
    const started = Date.now();
    await new Stryker(optionsFor(mod, concurrency)).runMutationTest();
    const label = mod.area === null ? mod.pkg : `${mod.pkg}/${mod.area}`;
    times.push(`${label}: ${Math.round((Date.now() - started) / 1000)} s`);
  }
  console.log(`mutation run times (concurrency ${concurrency}): ${times.join("; ")}`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
