// §15 on this host: a pool of real items (workspaces and stopped idle processes), claimed into a
// real metered run whose first receipt carries the claim's joules, evicted, closed, and verified.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { addressOf, testKey } from "@sbx/wire";
import { verifyLedger } from "@sbx/sandbox-attest/warmpool";
import {
  claimPoolItem,
  closePoolDir,
  createPoolDir,
  evictPoolItem,
  isAlive,
  listPool,
  openPoolDir,
  poolPaths,
  runClaimed,
} from "@sbx/host/pool";

const key = testKey("host");
const dir = mkdtempSync(join(tmpdir(), "sbx-pool-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const unit = addressOf({ unit: "pool-test" });
const grants = addressOf({ grants: "pool-test" });
const procState = (pid: number): string =>
  /\) (\S) /.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1] ?? "?";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** ended: whether process `pid` is gone within `ms` (a killed process dies, and is reaped, soon, not at once). */
async function ended(pid: number, ms = 5000): Promise<boolean> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(20)) if (!isAlive(pid)) return true;
  return !isAlive(pid);
}

test("pooled items are real, accrue energy, and a claim prices the run's first receipt", async () => {
  await createPoolDir(dir, { name: "t", manifest: addressOf({ m: 1 }), size: 3, key });
  const p = poolPaths(dir);
  const { items } = listPool(dir);
  assert.equal(items.length, 3);
  for (const it of items) {
    assert.ok(existsSync(p.workspace(it.item)), "workspace exists");
    assert.ok(it.idle_pid !== null && isAlive(it.idle_pid), "idle process exists");
    assert.equal(procState(it.idle_pid), "T", "idle process is stopped");
    assert.ok(BigInt(it.accounted_uj) > 0n, "provisioning is never free");
  }
  writeFileSync(join(p.workspace("item-0000"), "input.txt"), "x".repeat(100_000));
  await sleep(300);
  const later = listPool(dir).items[0];
  assert.ok(
    later && BigInt(later.accrued_now_uj) > BigInt(later.accounted_uj),
    "residency accrues while idle",
  );

  const c = claimPoolItem(dir, { unit, grants, key });
  assert.equal(c.claim.item, "item-0000");
  assert.ok(BigInt(c.claim.residency_uj) > 0n, "the claim carries residency");
  assert.ok(
    c.components.some(
      (x) => x.provenance === "estimated" && x.model.name === "ccf.memory/1" && BigInt(x.uj) > 0n,
    ),
    "the stopped idle process's resident memory is charged",
  );
  const run = await runClaimed(c, ["sh", "-c", "wc -c < input.txt"], key);
  assert.equal(run.stdout.trim(), "100000", "the run sees the claimed workspace");
  const charged = run.receipt.components.filter((x) => x.domain === "warmpool");
  assert.equal(charged.reduce((a, x) => a + BigInt(x.uj), 0n).toString(), c.claim.accrued_uj);
  assert.equal(run.receipt.seq, 0);
  assert.ok(await ended(items[0]?.idle_pid ?? -1), "the claimed item's idle process ended");
  await assert.rejects(
    async () => Promise.resolve(claimPoolItem(dir, { unit, grants, key, item: "item-0000" })),
    (e: unknown) => (e as { code?: string }).code === "DoubleClaim",
  );

  evictPoolItem(dir, "item-0001", "operator", key);
  assert.ok(!existsSync(p.item("item-0001")), "an evicted item's folder is removed");
  closePoolDir(dir, key);
  const sum = verifyLedger(
    { pool: JSON.parse(readFileSync(p.descriptor, "utf8")) as unknown, entries: openPoolDir(dir).entries },
    { requireClosed: true, hosts: [key.did] },
  );
  assert.deepEqual(sum.items, { provisioned: 3, resident: 0, claimed: 1, evicted: 2 });
  assert.equal(BigInt(sum.drawn_uj), BigInt(sum.claimed_uj) + BigInt(sum.evicted_uj));
  for (const it of items)
    assert.ok(await ended(it.idle_pid ?? -1), `idle process ${String(it.idle_pid)} ended`);
});

test("a log entry of the ledger cut short is refused, never silently accepted", () => {
  const p = poolPaths(dir);
  const last = readdirSync(p.ledger)
    .filter((f) => /^[0-9]{12}$/.test(f))
    .sort()
    .pop()!;
  const text = readFileSync(join(p.ledger, last), "utf8");
  writeFileSync(join(p.ledger, last), text.slice(0, text.length - 9));
  assert.throws(
    () => openPoolDir(dir),
    (e: unknown) => (e as { code?: string }).code === "PoolLedgerFormat",
  );
});
