// CLI start-up (issue 13): `sbx --version` and `jcp --version` through their bins (the compiled
// JavaScript in packages/cli/dist, rebuilt here from the current sources first) against a bare
// `node -e 0`, all in this run and interleaved so that a busy machine slows each alike. The goal is
// under 2× the bare node (issue 37). For comparison: `sbx --help`, which loads every command module;
// `sbx suspend --help`, which loads only the module of the command it names (what any command costs
// before it does anything); and `sbx --version` run from TypeScript through tsx, as the bins did
// before they were compiled.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { median, row } from "./measure.ts";

const ROOT = join(import.meta.dirname, "..");
const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 11);
const GOAL = 2;

interface Probe {
  readonly name: string;
  readonly args: readonly string[];
}

/** once runs one probe and returns its wall seconds; throws if it fails (a figure of a failure is no figure). */
function once(p: Probe): number {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, p.args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.error || r.status !== 0)
    throw new Error(`${p.name} failed: ${r.error?.message ?? r.stderr.toString()}`);
  return s;
}

/** interleaved runs every probe once per round (after one warm-up round) and returns each median. */
function interleaved(probes: readonly Probe[], rounds: number): number[] {
  const xs = probes.map(() => [] as number[]);
  for (let i = 0; i <= rounds; i++)
    probes.forEach((p, j) => {
      const s = once(p);
      if (i > 0) xs[j]!.push(s);
    });
  return xs.map(median);
}

export default function cliBench(): Promise<void> {
  const built = spawnSync(process.execPath, [join(ROOT, "scripts/build.mjs"), "cli"], { stdio: "inherit" });
  if (built.status !== 0) throw new Error("build of the CLIs failed");
  const fromSource =
    'const { runCli } = await import("./packages/cli/src/main.ts"); process.exitCode = await runCli("sbx", ["--version"]);';
  const probes: Probe[] = [
    { name: "node -e 0 (anchor)", args: ["-e", "0"] },
    { name: "sbx --version", args: ["packages/cli/bin/sbx.mjs", "--version"] },
    { name: "jcp --version", args: ["packages/cli/bin/jcp.mjs", "--version"] },
    { name: "sbx --help (loads every command)", args: ["packages/cli/bin/sbx.mjs", "--help"] },
    {
      name: "sbx suspend --help (loads its command's module)",
      args: ["packages/cli/bin/sbx.mjs", "suspend", "--help"],
    },
    {
      name: "sbx --version from src/ through tsx",
      args: ["--import", "tsx", "--input-type=module", "-e", fromSource],
    },
  ];
  const t = interleaved(probes, RUNS);
  const anchor = t[0]!;
  console.log(`CLI start-up, wall time (median of ${RUNS}, interleaved; goal < ${GOAL}× node -e 0):`);
  probes.forEach((p, i) => {
    row(p.name, `${(t[i]! * 1000).toFixed(1)} ms`, t[i]! / anchor, "node -e 0");
  });
  const worst = Math.max(t[1]!, t[2]!) / anchor;
  console.log(
    `  slower of sbx and jcp: ${worst.toFixed(2)}× node -e 0 (${worst < GOAL ? "within" : "OVER"} the ${GOAL}× goal)`,
  );
  return Promise.resolve();
}
