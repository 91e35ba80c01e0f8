// Exec gate (sandbox-attest §5.5): per-exec overhead on a loop of 2,000 execs of /bin/true in the
// sandbox, with no gate (the anchor: same namespaces, no fanotify marks), the gate with a warm
// cache, and the gate with no cache (every decision hashed by Node); then the gate's hash throughput
// on a 256 MiB binary against b3sum, and the first (cold) and second (warm) exec of that binary. The
// system (/usr, /etc) is read-only in the sandbox, as §5.1 has it: only files on a read-only mount are
// cached (§5.5.5), so the big binary's second exec is measured on a read-only and a writable mount.
import { spawnSync } from "node:child_process";
import { closeSync, copyFileSync, chmodSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomFillSync } from "node:crypto";
import { makePolicy } from "@sbx/sandbox-attest/execpolicy";
import { gateUnavailableReason, hashFile, LoaderSet, runGated } from "@sbx/host/gate";
import { fapolicydLoop, fapolicydUnavailable } from "./fapolicyd.ts";
import { gbps, median, row, timeCommand } from "./measure.ts";

const N = 2000;
const RUNS = Number(process.env.EXECGATE_RUNS ?? 5);
const tmp = join(process.cwd(), ".bench-tmp/execgate");

/** The loop: a short warm-up, then N execs timed inside the sandbox; prints ns and `times`. */
const LOOP = `i=0; while [ $i -lt 50 ]; do /bin/true; i=$((i+1)); done
s=$(date +%s%N); i=0; while [ $i -lt ${N} ]; do /bin/true; i=$((i+1)); done; e=$(date +%s%N); echo $((e-s)); times`;

type Mode = "none" | "warm" | "cold";
interface Sample {
  readonly wall: number;
  /** CPU seconds: the sandbox's processes, the helper, and this Node process (hashing, journal). */
  readonly cpu: number;
  readonly sandbox: number;
  readonly helper: number;
  readonly node: number;
  /** Of `node`: hashing the journal for its head, once the sandbox has ended. */
  readonly head: number;
  /** Per exec: permission events the helper answered, and execs the kernel let through unasked. */
  readonly asked: number;
  readonly unasked: number;
}

/** seconds parses dash's `times` figures ("0m1.234s"). */
function seconds(t: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(t);
  return m ? Number(m[1]) * 60 + Number(m[2]) : 0;
}

async function loopOnce(mode: Mode, loaders: LoaderSet): Promise<Sample> {
  const before = process.cpuUsage();
  const r = await runGated({
    policy: makePolicy("denylist"),
    command: ["/bin/sh", "-c", LOOP],
    workspace: tmp,
    readOnly: ["/usr", "/etc"],
    loaders,
    enforce: mode !== "none",
    cache: mode !== "cold",
  });
  const run = process.cpuUsage(before);
  r.journal.head(); // the journal hashes its events when a head is asked for: count that work too
  const node = process.cpuUsage(before);
  const head = (node.user + node.system - run.user - run.system) / 1e6;
  if (r.code !== 0) throw new Error(`loop failed: ${r.stderr}`);
  const [ns, ...times] = r.stdout.trim().split(/\s+/);
  const sandbox = times.map(seconds).reduce((a, b) => a + b, 0);
  const helper = (r.stats?.helperCpuUs ?? 0) / 1e6;
  const nodeCpu = (node.user + node.system) / 1e6;
  const asked = (r.stats?.permissionEvents ?? 0) / (N + 50);
  const unasked = (r.stats?.kernelHits ?? 0) / (N + 50);
  return {
    wall: Number(ns) / 1e9,
    cpu: sandbox + helper + nodeCpu,
    sandbox,
    helper,
    node: nodeCpu,
    head,
    asked,
    unasked,
  };
}

/** loops runs the three modes interleaved (the machine is shared), RUNS times each. */
async function loops(loaders: LoaderSet): Promise<Record<Mode, Sample>> {
  const xs: Record<Mode, Sample[]> = { none: [], warm: [], cold: [] };
  for (let i = 0; i < RUNS; i++)
    for (const m of ["none", "warm", "cold"] as const) xs[m].push(await loopOnce(m, loaders));
  const med = (m: Mode): Sample => {
    const keys = Object.keys(xs[m][0] as Sample) as (keyof Sample)[];
    return Object.fromEntries(keys.map((k) => [k, median(xs[m].map((x) => x[k]))])) as unknown as Sample;
  };
  return { none: med("none"), warm: med("warm"), cold: med("cold") };
}

function makeBig(path: string): void {
  copyFileSync("/bin/true", path);
  chmodSync(path, 0o755);
  const fd = openSync(path, "a");
  const chunk = Buffer.alloc(1 << 20);
  for (let i = 0; i < 256; i++) writeSync(fd, randomFillSync(chunk));
  closeSync(fd);
}

async function hashSeconds(path: string): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = process.hrtime.bigint();
    await hashFile(path);
    xs.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return median(xs);
}

async function bigExec(path: string, loaders: LoaderSet, readOnly: boolean): Promise<[number, number]> {
  const script = `s=$(date +%s%N); ${path}; m=$(date +%s%N); ${path}; e=$(date +%s%N); echo $((m-s)) $((e-m))`;
  const r = await runGated({
    policy: makePolicy("denylist"),
    command: ["/bin/sh", "-c", script],
    workspace: tmp,
    readOnly: readOnly ? [dirname(path)] : [],
    loaders,
    timeoutMs: 30_000,
  });
  const [a, b] = r.stdout
    .trim()
    .split(" ")
    .map((x) => Number(x) / 1e9) as [number, number];
  return [a, b];
}

/** The peer: fapolicyd on the same loop in a plain shell (bench/fapolicyd.ts), when asked for. */
async function peer(): Promise<void> {
  const why = fapolicydUnavailable();
  if (why !== null) {
    console.log(`  peer fapolicyd: not measured (${why})`);
    return;
  }
  const us = (x: number) => `${((x / N) * 1e6).toFixed(1)} µs/exec`;
  const p = await fapolicydLoop(LOOP, RUNS);
  console.log(`  peer: the same loop in a plain shell, median of ${RUNS} interleaved runs`);
  row("wall: no daemon (anchor)", us(p.none), 1, "no daemon");
  row("wall: fapolicyd, sha256 integrity, permissive", us(p.fapolicyd), p.fapolicyd / p.none, "no daemon");
}

export default async function execgate(): Promise<void> {
  const why = gateUnavailableReason();
  if (why !== null) {
    console.log(`  skipped: ${why}`);
    return;
  }
  mkdirSync(tmp, { recursive: true });
  const loaders = await new LoaderSet().loadHost();
  try {
    const { none, warm, cold } = await loops(loaders);
    const us = (x: number) => `${((x / N) * 1e6).toFixed(1)} µs/exec`;
    console.log(
      `  ${N} execs of /bin/true in a shell loop, median of ${RUNS} interleaved runs; anchor: same sandbox, no gate`,
    );
    row("wall: no gate (anchor)", us(none.wall), 1, "no gate");
    row("wall: gate, warm cache", us(warm.wall), warm.wall / none.wall, "no gate");
    row("wall: gate, no cache (every exec hashed)", us(cold.wall), cold.wall / none.wall, "no gate");
    row("cpu: no gate (anchor)", us(none.cpu), 1, "no gate");
    row("cpu: gate, warm cache (incl. helper)", us(warm.cpu), warm.cpu / none.cpu, "no gate");
    row("cpu: gate, no cache (incl. helper + Node)", us(cold.cpu), cold.cpu / none.cpu, "no gate");
    for (const [name, x] of [
      ["no gate", none],
      ["warm", warm],
      ["no cache", cold],
    ] as const)
      console.log(
        `  cpu split, ${name}: sandbox ${us(x.sandbox)}, helper ${us(x.helper)}, Node (hashing files + §8 journal) ${us(x.node)}, of which the journal's head ${us(x.head)}`,
      );
    console.log(
      `  per exec, warm: ${warm.asked.toFixed(2)} permission events answered, ${warm.unasked.toFixed(2)} execs let through by the kernel's ignore masks (journaled from their notices)`,
    );
    console.log(
      `  warm-cache overhead: wall ${(((warm.wall - none.wall) / none.wall) * 100).toFixed(1)}%, cpu ${(((warm.cpu - none.cpu) / none.cpu) * 100).toFixed(1)}% (goal: under 10%)`,
    );
    await peer();
    mkdirSync(join(tmp, "ro"));
    const big = join(tmp, "ro", "big-binary");
    makeBig(big);
    const size = 256 * (1 << 20);
    const gate = await hashSeconds(big);
    const b3 = timeCommand(RUNS, "b3sum", [big]);
    const b3one = timeCommand(RUNS, "b3sum", ["--num-threads", "1", big]);
    console.log(`  BLAKE3 of a ${size >> 20} MiB binary (page cache warm), median of ${RUNS}; anchor: b3sum`);
    if (b3 !== null) row("b3sum (all cores, anchor)", gbps(size / b3), 1, "b3sum");
    if (b3one !== null && b3 !== null)
      row("b3sum --num-threads 1", gbps(size / b3one), b3one / b3, "b3sum time");
    row(
      "gate hashing (Node, @sbx/wire createBlake3)",
      gbps(size / gate),
      b3 === null ? undefined : gate / b3,
      "b3sum time",
    );
    const [first, second] = await bigExec(big, loaders, true);
    row("first exec of the 256 MiB binary (miss: hash)", `${(first * 1e3).toFixed(1)} ms`);
    row(
      "second exec, read-only mount (cache hit)",
      `${(second * 1e3).toFixed(2)} ms`,
      second / first,
      "first exec",
    );
    const [, again] = await bigExec(big, loaders, false);
    row(
      "second exec, writable mount (hashed again)",
      `${(again * 1e3).toFixed(2)} ms`,
      again / first,
      "first exec",
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    spawnSync("sync");
  }
}
