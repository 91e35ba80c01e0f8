// Warm-pool claim vs cold start (sandbox-attest §15.4): the time from the start of a claim to the
// unit's first instruction, against a cold `sbx run` of the same command (runUnit building a fresh
// sandbox: cgroup, launcher, bwrap, mounts) from the same process. The unit is `date +%s%N`: its
// output is the wall clock when it ran, read against the host's clock taken just before the claim
// (or the cold run) began. Claim: the ledger's claim appended and synced, the argv handed over, the
// meter and journal started, the sandbox thawed, the waiter's exec. Rounds are interleaved (one
// claim, one cold run), so a busy machine slows both alike; medians are printed, with the ratio
// cold/claim. Also each path's whole interval (start to attested), the claim's parts (the ledger
// step; the thaw to the first instruction), and the provisioning of an item (parking a sandbox),
// which the claim does not pay.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { makeUnit } from "@sbx/sandbox-attest/unit";
import { runUnit } from "@sbx/host/run";
import { sandboxUnavailableReason } from "@sbx/host/sandbox";
import { claimPoolItem, claimSandbox, createPoolDir, destroyPoolDir } from "@sbx/host/pool";
import { median, row } from "./measure.ts";

const ROUNDS = Number(process.env.POOL_BENCH_ROUNDS ?? 15);
const key = testKey("pool-bench");
const manifest = addressOf({ bench: "pool" });
const grants = addressOf({});
const argv = ["date", "+%s%N"];
const unit = makeUnit({ argv, manifest, level: "S4" });
const id = addressOf(unit);

/** The wall clock now, in ns (the same clock `date +%s%N` reads). */
function nowNs(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
}

function firstInstructionMs(out: Buffer, t0: bigint): number {
  const ran = BigInt(out.toString().trim());
  return Number(ran - t0) / 1e6;
}

export default async function bench(): Promise<void> {
  const why = sandboxUnavailableReason();
  if (why !== null) {
    console.log(`  pool bench not run: ${why}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "sbx-bench-pool-"));
  const ws = mkdtempSync(join(tmpdir(), "sbx-bench-cold-"));
  try {
    const p0 = process.hrtime.bigint();
    await createPoolDir(dir, { name: "bench", manifest, size: ROUNDS + 1, key, parked: {} });
    const provisionMs = Number(process.hrtime.bigint() - p0) / 1e6 / (ROUNDS + 1);
    const common = { argv, hostKey: key, unitId: id, unit, grantsId: grants, manifest, policy: grants };
    const warm: number[] = [];
    const cold: number[] = [];
    const warmAll: number[] = [];
    const ledger: number[] = [];
    const handoff: number[] = [];
    const coldAll: number[] = [];
    for (let i = 0; i <= ROUNDS; i++) {
      const t0 = nowNs();
      const h0 = process.hrtime.bigint();
      const c = claimPoolItem(dir, { unit: id, grants, key });
      const claimedAt = nowNs();
      const at = { proceed: 0n };
      const r = await runUnit({
        ...common,
        sandbox: { workspace: c.workspace },
        startSandbox: (a) => {
          const sb = claimSandbox(c.itemDir, a);
          return {
            ...sb,
            proceed: (go: boolean) => {
              at.proceed = nowNs();
              sb.proceed(go);
            },
          };
        },
        extraComponents: c.components,
      });
      const warmTotal = Number(process.hrtime.bigint() - h0) / 1e6;
      if (r.outcome.status !== "exited" || r.outcome.exit_code !== 0) throw new Error("claimed run failed");
      const t1 = nowNs();
      const h1 = process.hrtime.bigint();
      const q = await runUnit({ ...common, sandbox: { workspace: ws } });
      const coldTotal = Number(process.hrtime.bigint() - h1) / 1e6;
      if (q.outcome.status !== "exited" || q.outcome.exit_code !== 0) throw new Error("cold run failed");
      if (i === 0) continue; // warm-up round
      warm.push(firstInstructionMs(r.stdout, t0));
      ledger.push(Number(claimedAt - t0) / 1e6);
      handoff.push(firstInstructionMs(r.stdout, at.proceed));
      cold.push(firstInstructionMs(q.stdout, t1));
      warmAll.push(warmTotal);
      coldAll.push(coldTotal);
    }
    const ms = (x: number) => `${x.toFixed(2)} ms`;
    console.log(`  ${String(ROUNDS)} interleaved rounds; unit ${argv.join(" ")}; medians`);
    row("cold sbx run: start → first instruction", ms(median(cold)), 1, "cold");
    row(
      "pool claim: start → first instruction",
      ms(median(warm)),
      median(cold) / median(warm),
      "faster than cold",
    );
    row("cold sbx run: start → attested", ms(median(coldAll)), 1, "cold");
    row(
      "pool claim: start → attested",
      ms(median(warmAll)),
      median(coldAll) / median(warmAll),
      "faster than cold",
    );
    row("  of which: the ledger claim (verify new entries, compare-and-append, fsync)", ms(median(ledger)));
    row("  of which: thaw → first instruction", ms(median(handoff)));
    row("provisioning one item (parked sandbox)", ms(provisionMs));
  } finally {
    await destroyPoolDir(dir, key).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
}
