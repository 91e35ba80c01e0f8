// The peer for the exec gate's overhead (sandbox-attest §5.5): fapolicyd (Debian's package), which
// also decides execs with fanotify permission events, here checking each executed file against
// its trust database by SHA-256 (`integrity = sha256`, its object cache on) and allowing it
// (`--permissive`). It watches the whole host, not one sandbox, so it is measured on a plain shell
// loop, the same 2,000 execs of /bin/true, with and without the daemon, interleaved.
//
// It rewrites /etc/fapolicyd for the run and restores it after, so it runs only when asked:
// SBX_BENCH_FAPOLICYD=1 npm run bench -- execgate (as root, with fapolicyd installed).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "./measure.ts";

const ETC = "/etc/fapolicyd";
const RULES = `allow perm=execute all : trust=1\nallow perm=any all : all\n`;
const TRUSTED = [
  "/usr/bin/true",
  "/usr/bin/dash",
  "/usr/bin/date",
  "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
  "/usr/lib/x86_64-linux-gnu/libc.so.6",
];

/** fapolicydUnavailable says why the peer cannot run here, or null. */
export function fapolicydUnavailable(): string | null {
  if (process.env.SBX_BENCH_FAPOLICYD !== "1")
    return "set SBX_BENCH_FAPOLICYD=1 to measure it (it rewrites /etc/fapolicyd for the run)";
  if (process.getuid?.() !== 0) return "needs root";
  if (spawnSync("fapolicyd", ["--help"]).error)
    return "fapolicyd is not installed (Debian package fapolicyd)";
  return null;
}

/** The settings the run needs, each replacing its line in fapolicyd.conf. */
const SETTINGS: Readonly<Record<string, string>> = {
  integrity: "sha256",
  trust: "file",
  uid: "root",
  gid: "root",
};

function configure(): void {
  const conf = join(ETC, "fapolicyd.conf");
  let text = readFileSync(conf, "utf8");
  for (const [k, v] of Object.entries(SETTINGS))
    text = text.replace(new RegExp(`^${k} = .*$`, "m"), `${k} = ${v}`);
  writeFileSync(conf, text);
  rmSync(join(ETC, "rules.d"), { recursive: true, force: true });
  mkdirSync(join(ETC, "rules.d"));
  writeFileSync(join(ETC, "rules.d", "50-bench.rules"), RULES);
  writeFileSync(join(ETC, "fapolicyd.trust"), "");
  for (const f of TRUSTED) if (existsSync(f)) spawnSync("fapolicyd-cli", ["--file", "add", f]);
  spawnSync("fagenrules");
}

async function start(): Promise<ChildProcess> {
  const d = spawn("fapolicyd", ["--permissive", "--debug-deny"], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  d.stderr.on("data", (b: Buffer) => (log += b.toString()));
  const end = Date.now() + 30_000;
  while (!log.includes("Starting to listen for events")) {
    if (d.exitCode !== null || Date.now() > end)
      throw new Error(`fapolicyd did not start: ${log.slice(-400)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return d;
}

async function stop(d: ChildProcess): Promise<void> {
  const gone = new Promise((r) => d.on("exit", r));
  d.kill("SIGTERM");
  await gone;
}

/** loopSeconds runs the shell loop and returns the seconds its `n` timed execs took. */
function loopSeconds(script: string): number {
  const r = spawnSync("/bin/sh", ["-c", script], { encoding: "utf8" });
  return Number(r.stdout.trim().split(/\s+/)[0]) / 1e9;
}

/**
 * fapolicydLoop measures the loop `script` (which prints nanoseconds) `runs` times with and without
 * the daemon, interleaved; returns the median seconds of each.
 */
export async function fapolicydLoop(
  script: string,
  runs: number,
): Promise<{ none: number; fapolicyd: number }> {
  const keep = mkdtempSync(join(tmpdir(), "sbx-fapolicyd-"));
  cpSync(ETC, join(keep, "etc"), { recursive: true });
  const xs = { none: [] as number[], fapolicyd: [] as number[] };
  try {
    configure();
    for (let i = 0; i < runs; i++) {
      xs.none.push(loopSeconds(script));
      const d = await start();
      try {
        xs.fapolicyd.push(loopSeconds(script));
      } finally {
        await stop(d);
      }
    }
  } finally {
    rmSync(ETC, { recursive: true, force: true });
    cpSync(join(keep, "etc"), ETC, { recursive: true });
    rmSync(keep, { recursive: true, force: true });
  }
  return { none: median(xs.none), fapolicyd: median(xs.fapolicyd) };
}
