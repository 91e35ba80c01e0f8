// Sandbox start-to-exit (sandbox-attest §5): /bin/true run bare, run in bwrap with the same flags by
// hand (the anchor: the launcher and bwrap alone, with the seccomp program, /etc and workspace made
// once beforehand and no cgroup), run by startSandbox (a fresh run cgroup with its limits, a
// generated /etc, the seccomp program, the leftovers' kill and the cgroup's removal), and run by
// runUnit in the sandbox (plus the meter, the journal, the receipt and the signed attestation).
// The four are interleaved round by round, so a busy machine slows them alike; medians are printed.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { runUnit } from "@sbx/host/run";
import {
  bwrapArgs,
  handWorkspace,
  launcherArgv,
  sandboxUnavailableReason,
  sandboxUser,
  seccompProgram,
  startSandbox,
  writeEtc,
  SANDBOX_PATH,
  DEFAULT_HOST_UID,
} from "@sbx/host/sandbox";
import { median, row } from "./measure.ts";

const ROUNDS = Number(process.env.SANDBOX_BENCH_ROUNDS ?? 30);

function timed(argv: readonly string[]): Promise<number> {
  const t = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    // Descriptor 6 is bwrap's status pipe (--json-status-fd), as startSandbox gives it.
    const stdio = ["ignore", "ignore", "ignore", "ignore", "ignore", "ignore", "pipe"] as const;
    const c = spawn(argv[0] ?? "", argv.slice(1), { stdio: [...stdio], env: {} });
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
  const byHand = launcherArgv(
    {
      cgroups: [],
      seccompFile: join(scratch, "seccomp.bpf"),
      workspace: ws,
      etc: etc.dir,
      hostUid: DEFAULT_HOST_UID,
    },
    bwrapArgs(plan),
  );
  const none = addressOf({});
  const unit = { hostKey: testKey("host"), unitId: none, grantsId: none, manifest: none, policy: none };
  const s = { bare: [] as number[], bwrap: [] as number[], sandbox: [] as number[], run: [] as number[] };
  try {
    for (let i = 0; i <= ROUNDS; i++) {
      const bare = await timed(["/bin/true"]);
      const bw = await timed(byHand);
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
}
