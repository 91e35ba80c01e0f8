// Grants governing runs (issue 17). 1) Spends per second on one grant's ledger (jcp §4.3): one
// writer process making SPENDS spends against 8 writer processes making SPENDS / 8 each, at once,
// on the same grant (every loser of a head retries: StaleHead); the single writer is the anchor.
// Processes start and load first, then all begin together; wall time from the start to the last
// spend. 2) The cost of live budget checks (jcp §4.3 "Budgets enforced live") on a unit's run time:
// the same CPU-bound unit run by runUnit in the sandbox without a live check (the anchor) and with
// the live budget check of `sbx run --grant` (meter read every 100 ms, the ledger read from its
// verified state at every check), interleaved round by round; medians of wall time and of the
// unit's CPU time as the cgroup counted it.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { addressOf, testKey } from "@sbx/wire";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { runUnit } from "@sbx/host/run";
import { sandboxUnavailableReason } from "@sbx/host/sandbox";
import { budgetWatch } from "@sbx/host/grants";
import { runCli, verifiedLedger } from "@sbx/cli";
import { median, rate, row } from "./measure.ts";

const SPENDS = Number(process.env.GRANTRUN_BENCH_SPENDS ?? 200);
const ROUNDS = Number(process.env.GRANTRUN_BENCH_ROUNDS ?? 7);
const LOOP = Number(process.env.GRANTRUN_BENCH_LOOP ?? 300000);

async function jcp(argv: string[]): Promise<string> {
  const out: string[] = [];
  const code = await runCli("jcp", argv, { out: (l) => out.push(l), err: (l) => console.error(l) });
  if (code !== 0) throw new Error(`jcp ${argv[0] ?? ""} exited ${code}`);
  return out.join("\n");
}

async function grantDir(): Promise<{ d: string; p: (n: string) => string; dids: Map<string, string> }> {
  const d = mkdtempSync(join(tmpdir(), "bench-grantrun-"));
  const p = (n: string) => join(d, n);
  const dids = new Map<string, string>();
  for (const k of ["root", "alice", "host"])
    dids.set(
      k,
      /did:key:[1-9A-HJ-NP-Za-km-z]+/.exec(await jcp(["keygen", "--out", p(`${k}.key`)]))?.[0] ?? "",
    );
  await jcp([
    ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), "--resource", "/fs/work/**"],
    ...["--action", "read", "--action", "write", "--uj", "1000000J", "--depth", "0"],
    ...["--ttl", "86400000", "--out", p("alice.chain")],
  ]);
  return { d, p, dids };
}

// Writers that each make `each` spends of 1 µJ once the go file appears; resolves with the wall seconds.
async function spendRace(writers: number, each: number): Promise<number> {
  const { d, p } = await grantDir();
  try {
    const args = [
      ...["--host-key", p("host.key"), "--chain", p("alice.chain"), "--ledger", p("ledger")],
      ...["--root", p("root.key"), "--uj", "1"],
    ];
    const worker = join(import.meta.dirname, "..", "packages", "cli", "test", "spend-race-worker.ts");
    const kids = Array.from({ length: writers }, () =>
      spawn(process.execPath, ["--import", "tsx", worker, p("go"), String(each), ...args], {
        stdio: ["ignore", "pipe", "inherit"],
      }),
    );
    const ready = kids.map(
      (k) => new Promise<void>((r) => createInterface({ input: k.stdout }).once("line", () => r())),
    );
    const done = kids.map((k) => new Promise<void>((r) => k.once("close", () => r())));
    await Promise.all(ready);
    const t = process.hrtime.bigint();
    writeFileSync(p("go"), "");
    await Promise.all(done);
    return Number(process.hrtime.bigint() - t) / 1e9;
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

async function spendBench(): Promise<void> {
  console.log(`spends on one grant's ledger, ${SPENDS} spends in all (median of 3)`);
  const one: number[] = [];
  const eight: number[] = [];
  for (let i = 0; i < 3; i++) {
    one.push(await spendRace(1, SPENDS));
    eight.push(await spendRace(8, SPENDS / 8));
  }
  const r1 = SPENDS / median(one);
  const r8 = SPENDS / median(eight);
  row("1 writer (anchor)", rate(r1), 1, "1 writer");
  row("8 concurrent writers", rate(r8), r8 / r1, "1 writer");
}

async function liveBench(): Promise<void> {
  const why = sandboxUnavailableReason();
  if (why !== null) {
    console.log(`live budget checks: not measured here (${why})`);
    return;
  }
  const { d, p, dids } = await grantDir();
  try {
    const opts = { roots: [dids.get("root") ?? ""], hosts: [dids.get("host") ?? ""] };
    await jcp([
      ...["spend", "--host-key", p("host.key"), "--chain", p("alice.chain"), "--ledger", p("ledger")],
      ...["--root", p("root.key"), "--uj", "1"],
    ]);
    const argv = ["sh", "-c", `i=0; while [ $i -lt ${LOOP} ]; do i=$((i+1)); done`];
    const unit = makeUnit({ argv, manifest: addressOf({}), level: "S4" });
    const once = async (live: boolean) => {
      const ws = mkdtempSync(join(tmpdir(), "bench-grantrun-ws-"));
      try {
        const watch = budgetWatch(() => {
          const { ledger } = verifiedLedger(p("ledger"), opts);
          return 10n ** 15n - BigInt(ledger.count);
        });
        const t = process.hrtime.bigint();
        const r = await runUnit({
          argv,
          unit,
          unitId: unitId(unit),
          hostKey: testKey("bench-host"),
          grantsId: addressOf({}),
          manifest: addressOf({}),
          policy: addressOf({}),
          sandbox: { workspace: ws },
          ...(live ? { live: watch } : {}),
        });
        const wall = Number(process.hrtime.bigint() - t) / 1e9;
        const cpu = r.receipt.receipt.components.find((c) => c.domain === "cpu");
        const inputs = cpu && cpu.provenance === "estimated" ? cpu.model.inputs : null;
        const us = inputs && "vcpu_us" in inputs ? Number(inputs.vcpu_us) : NaN;
        return { wall, cpu: us / 1e6 };
      } finally {
        rmSync(ws, { recursive: true, force: true });
      }
    };
    await once(false);
    await once(true);
    const plain: { wall: number; cpu: number }[] = [];
    const live: { wall: number; cpu: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      plain.push(await once(false));
      live.push(await once(true));
    }
    const w0 = median(plain.map((x) => x.wall));
    const w1 = median(live.map((x) => x.wall));
    const c0 = median(plain.map((x) => x.cpu));
    const c1 = median(live.map((x) => x.cpu));
    console.log(
      `live budget checks: a ${LOOP}-iteration shell loop in the sandbox, ${ROUNDS} rounds interleaved`,
    );
    row("run wall, no live check (anchor)", `${w0.toFixed(3)} s`, 1, "no check");
    row("run wall, live budget check every 100 ms", `${w1.toFixed(3)} s`, w1 / w0, "no check");
    row("unit CPU, no live check (anchor)", `${c0.toFixed(3)} s`, 1, "no check");
    row("unit CPU, live budget check every 100 ms", `${c1.toFixed(3)} s`, c1 / c0, "no check");
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

export default async function main(): Promise<void> {
  await spendBench();
  await liveBench();
}
