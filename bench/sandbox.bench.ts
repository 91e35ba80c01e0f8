// Sandbox start-to-exit (sandbox-attest §5): /bin/true run bare, run in bwrap with the same flags by
// hand (the anchor: bwrap spawned directly as the sandbox's host uid, with the seccomp program, /etc
// and workspace opened once beforehand, no cgroup), run by the launcher (native sbx-launch: the
// private mount namespace and workspace bind, the descriptors closed, the uid and capability drop)
// and bwrap, run by startSandbox (a fresh run cgroup with its limits, a
// generated /etc, the seccomp program, the leftovers' kill and the cgroup's removal), and run by
// runUnit in the sandbox (plus the meter, the journal, the receipt and the signed attestation).
// The four are interleaved round by round, so a busy machine slows them alike; medians are printed.
// Then the exec gate inside the sandbox (§5.5.5): a loop of EXECS runs of /usr/bin/true (on the
// read-only /usr, so warm after the first) in runUnit's sandbox without and with an exec policy,
// interleaved: the loop's wall time and CPU time inside (sh's `times`), and that CPU plus the
// gate helper's and this host process's over the whole run.
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { makePolicy, policyAddress } from "@sbx/sandbox-attest/execpolicy";
import { runUnit } from "@sbx/host/run";
import {
  boundWorkspace,
  bwrapArgs,
  handWorkspace,
  sharedSystemDir,
  launcherArgv,
  sandboxUnavailableReason,
  sandboxUser,
  seccompProgram,
  startSandbox,
  writeEtc,
  SANDBOX_PATH,
  TOOLS,
  DEFAULT_HOST_UID,
} from "@sbx/host/sandbox";
import { median, row } from "./measure.ts";

const ROUNDS = Number(process.env.SANDBOX_BENCH_ROUNDS ?? 30);
const GATE_ROUNDS = Number(process.env.SANDBOX_GATE_BENCH_ROUNDS ?? 10);
const EXECS = Number(process.env.SANDBOX_GATE_BENCH_EXECS ?? 500);

/** timed runs argv once; `fds` become descriptors 3, 4, 5 (bwrap's seccomp, workspace and /etc). */
function timed(argv: readonly string[], fds: readonly number[] = [], uid?: number): Promise<number> {
  const t = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    // Descriptor 6 is bwrap's status pipe (--json-status-fd), as startSandbox gives it.
    const mid = [0, 1, 2].map((i) => fds[i] ?? "ignore");
    const stdio = ["ignore", "ignore", "ignore", ...mid, "pipe"] as ("ignore" | "pipe" | number)[];
    const ids = uid === undefined ? {} : { uid, gid: uid };
    const c = spawn(argv[0] ?? "", argv.slice(1), { stdio, env: {}, ...ids });
    (c.stdio[6 as 4] as Readable | null)?.resume();
    c.once("error", reject);
    c.once("close", (code) => {
      if (code !== 0) reject(new Error(`${argv.join(" ")} exited ${String(code)}`));
      else resolve(Number(process.hrtime.bigint() - t) / 1e9);
    });
  });
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

export default async function bench(): Promise<void> {
  const why = sandboxUnavailableReason();
  if (why !== null) {
    console.log(`  sandbox bench not run: ${why}`);
    return;
  }
  const ws = mkdtempSync(join(tmpdir(), "sbx-bench-ws-"));
  const scratch = mkdtempSync(join(tmpdir(), "sbx-bench-"));
  handWorkspace(ws, DEFAULT_HOST_UID); // as startSandbox does before each run
  const user = sandboxUser(undefined);
  const etc = writeEtc(user, "sandbox");
  writeFileSync(join(scratch, "seccomp.bpf"), seccompProgram());
  const env = { PATH: SANDBOX_PATH, HOME: "/work", USER: user.name, LANG: "C.UTF-8" };
  const plan = {
    user,
    workspaceFolder: "/work",
    hostname: "sandbox",
    tmpBytes: 64 << 20,
    env,
    argv: ["/bin/true"],
  };
  // By hand: bwrap with the same flags, started directly as the sandbox's host uid (node's spawn
  // sets uid, gid and no groups), the descriptors opened here beforehand.
  const bwrapOnly = [TOOLS.bwrap, ...bwrapArgs(plan)];
  // bwrap reads the seccomp descriptor to its end: each run gets fresh descriptors (opened untimed).
  const open = () => [openSync(join(scratch, "seccomp.bpf"), "r"), openSync(ws, "r"), openSync(etc.dir, "r")];
  const launcher = launcherArgv(
    {
      cgroups: [],
      seccompFile: join(scratch, "seccomp.bpf"),
      workspace: ws,
      etc: etc.dir,
      mountpoint: sharedSystemDir({}),
      hostUid: DEFAULT_HOST_UID,
    },
    bwrapArgs(plan),
  );
  const none = addressOf({});
  const id = unitId(makeUnit({ argv: ["/bin/true"], manifest: none, level: "S0" }));
  const unit = { hostKey: testKey("host"), unitId: id, grantsId: none, manifest: none, policy: none };
  const s = {
    bare: [] as number[],
    bwrap: [] as number[],
    launcher: [] as number[],
    sandbox: [] as number[],
    run: [] as number[],
  };
  try {
    for (let i = 0; i <= ROUNDS; i++) {
      const bare = await timed(["/bin/true"]);
      const fds = open();
      const bw = await timed(bwrapOnly, fds, DEFAULT_HOST_UID).finally(() => {
        for (const fd of fds) closeSync(fd);
      });
      const la = await timed(launcher);
      const sb = await time(async () => {
        const x = startSandbox(["/bin/true"], { workspace: ws }, "ignore");
        x.child.stdout?.resume();
        x.child.stderr?.resume();
        await x.done;
        await x.release();
      });
      const ru = await time(() =>
        runUnit({ ...unit, argv: ["/bin/true"], sandbox: { workspace: ws }, meter: { sampleMs: 0 } }),
      );
      if (i === 0) continue; // warm-up round
      s.bare.push(bare);
      s.bwrap.push(bw);
      s.launcher.push(la);
      s.sandbox.push(sb);
      s.run.push(ru);
    }
  } finally {
    etc.remove();
    rmSync(scratch, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
  const ms = (x: number) => `${(x * 1000).toFixed(2)} ms`;
  const anchor = median(s.bwrap);
  console.log(`  /bin/true start to exit, median of ${ROUNDS} interleaved rounds`);
  row("bare /bin/true", ms(median(s.bare)), median(s.bare) / anchor, "bwrap by hand");
  row("bwrap by hand, same flags (anchor)", ms(anchor), 1, "bwrap by hand");
  row(
    "sbx-launch + bwrap (mount ns, fds closed, drop)",
    ms(median(s.launcher)),
    median(s.launcher) / anchor,
    "bwrap by hand",
  );
  row(
    "startSandbox (cgroup, limits, /etc, seccomp)",
    ms(median(s.sandbox)),
    median(s.sandbox) / anchor,
    "bwrap by hand",
  );
  row(
    "runUnit sandboxed (+meter, journal, attestation)",
    ms(median(s.run)),
    median(s.run) / anchor,
    "bwrap by hand",
  );
  console.log(`  goal: startSandbox within 1.3× of bwrap by hand`);
  diskBench(anchor);
  await gateBench();
}

const DISK_ROUNDS = Number(process.env.SANDBOX_DISK_BENCH_ROUNDS ?? 10);

/**
 * diskBench (§5.3): what the workspace's kernel-enforced bound adds to a sandbox's life, by what the
 * workspace holds: its image made and filled (mke2fs -d), reserved and mounted, then written back
 * (the tree copied back, synced) and removed; against `anchor` (bwrap by hand, seconds).
 */
export function diskBench(anchor: number): void {
  const cases = [
    { name: "empty workspace", files: 0, size: 0 },
    { name: "256 files of 64 KiB (16 MiB)", files: 256, size: 64 << 10 },
    { name: "one file of 128 MiB", files: 1, size: 128 << 20 },
  ];
  console.log(`  §5.3 workspace bound (image made, mounted, written back), median of ${DISK_ROUNDS}`);
  for (const c of cases) {
    const ws = mkdtempSync(join(tmpdir(), "sbx-bench-disk-"));
    try {
      for (let i = 0; i < c.files; i++) writeFileSync(join(ws, `f${String(i)}`), Buffer.alloc(c.size, 1));
      const xs: number[] = [];
      for (let i = 0; i <= DISK_ROUNDS; i++) {
        const t = process.hrtime.bigint();
        boundWorkspace(ws, 1 << 30, DEFAULT_HOST_UID).release();
        if (i > 0) xs.push(Number(process.hrtime.bigint() - t) / 1e9);
      }
      row(
        `bound + write-back, ${c.name}`,
        `${(median(xs) * 1000).toFixed(2)} ms`,
        median(xs) / anchor,
        "bwrap by hand",
      );
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  }
}

/** seconds parses sh's `times` figures ("0m0.010s"). */
function seconds(t: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(t);
  if (m === null) throw new Error(`times printed ${t}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/** The exec gate's overhead inside the sandbox, warm cache (§5.5.5). */
async function gateBench(): Promise<void> {
  const ws = mkdtempSync(join(tmpdir(), "sbx-bench-gate-"));
  const script = [
    "s=$(date +%s%N); i=0",
    `while [ $i -lt ${String(EXECS)} ]; do /usr/bin/true; i=$((i+1)); done`,
    'e=$(date +%s%N); echo "wall $((e-s))"; times',
  ].join("\n");
  const argv = ["/bin/sh", "-c", script];
  const none = addressOf({});
  const policy = makePolicy("denylist", [], []);
  const base = {
    argv,
    hostKey: testKey("host"),
    unitId: unitId(makeUnit({ argv, manifest: none, level: "S0" })),
    grantsId: none,
    manifest: none,
    sandbox: { workspace: ws },
    meter: { sampleMs: 0 },
  };
  const s = { plain: { wall: [] as number[], cpu: [] as number[], all: [] as number[] } };
  const g = { wall: [] as number[], cpu: [] as number[], all: [] as number[] };
  let hits = 0;
  let kernelHits = 0;
  const one = async (gated: boolean) => {
    const c0 = process.cpuUsage();
    const r = await runUnit(
      gated ? { ...base, policy: policyAddress(policy), execPolicy: policy } : { ...base, policy: none },
    );
    const c = process.cpuUsage(c0);
    const out = r.stdout.toString();
    const wall = /wall (\d+)/.exec(out)?.[1];
    const t = out.trim().split("\n").slice(-2).join(" ").split(/\s+/);
    if (wall === undefined || t.length !== 4 || r.outcome.status !== "exited")
      throw new Error(`gate bench loop failed: ${out} ${r.stderr.toString()}`);
    if (gated && r.gate?.held !== true) throw new Error("the gate did not hold the run");
    const cpu = t.reduce((a, x) => a + seconds(x), 0);
    const helper = (r.gate?.stats?.helperCpuUs ?? 0) / 1e6;
    if (gated) hits += r.gate?.stats?.hits ?? 0;
    if (gated) kernelHits += r.gate?.stats?.kernelHits ?? 0;
    return { wall: Number(wall) / 1e9, cpu, all: cpu + helper + (c.user + c.system) / 1e6 };
  };
  try {
    for (let i = 0; i <= GATE_ROUNDS; i++) {
      const a = await one(false);
      const b = await one(true);
      if (i === 0) continue; // warm-up round
      for (const k of ["wall", "cpu", "all"] as const) {
        s.plain[k].push(a[k]);
        g[k].push(b[k]);
      }
    }
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
  const ms = (x: number) => `${(x * 1000).toFixed(2)} ms`;
  console.log(
    `  exec gate inside the sandbox: ${String(EXECS)} execs of /usr/bin/true, median of ${String(GATE_ROUNDS)} interleaved rounds`,
  );
  const p = s.plain;
  row("loop wall, ungated sandbox (anchor)", ms(median(p.wall)), 1, "ungated");
  row(
    "loop wall, gated sandbox (warm cache)",
    ms(median(g.wall)),
    median(g.wall) / median(p.wall),
    "ungated",
  );
  row("loop CPU inside, ungated (anchor)", ms(median(p.cpu)), 1, "ungated");
  row("loop CPU inside, gated", ms(median(g.cpu)), median(g.cpu) / median(p.cpu), "ungated");
  row("run CPU: inside + helper + host, ungated", ms(median(p.all)), 1, "ungated");
  row("run CPU: inside + helper + host, gated", ms(median(g.all)), median(g.all) / median(p.all), "ungated");
  console.log(
    `  per gated run: ${(hits / (GATE_ROUNDS + 1)).toFixed(0)} helper cache hits, ${(kernelHits / (GATE_ROUNDS + 1)).toFixed(0)} kernel cache hits; goal: warm overhead under 10% in CPU and wall`,
  );
}
