// `sbx pool` on real parked sandboxes, through the real binary: two claimants racing for one item
// (exactly one wins, in three rounds), a claimant SIGKILLed after its claim is committed (the item
// is never taken again, the next claim takes the next item), and destroy ending every sandbox.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { verifyLedger } from "@sbx/sandbox-attest/warmpool";
import { openPoolDir, readParked } from "@sbx/host/pool";
import { SBX, sbx, waitFor } from "./lifecycle-helpers.ts";

const store = mkdtempSync(join(tmpdir(), "sbx-pool-cli-"));
after(() => rmSync(store, { recursive: true, force: true }));
const MANIFEST = "blake3:" + "ab".repeat(32);
const poolDir = (name: string) => join(store, "pools", name);
const claims = (name: string) => openPoolDir(poolDir(name)).payloads.filter((p) => p.kind === "claimed");

test("two claimants, one item: exactly one wins, the other is told PoolEmpty", async () => {
  for (const round of [1, 2, 3]) {
    const name = `race${String(round)}`;
    const made = await sbx([
      "pool",
      "create",
      "--store",
      store,
      "--pool",
      name,
      "--manifest",
      MANIFEST,
      "-n",
      "1",
    ]);
    assert.equal(made.code, 0, made.err);
    const [a, b] = await Promise.all(
      ["A", "B"].map((who) =>
        sbx(["pool", "claim", "--store", store, "--pool", name, "--", "echo", `ran ${who}`]),
      ),
    );
    assert.ok(a && b);
    const won = [a, b].filter((r) => r.code === 0);
    const lost = [a, b].filter((r) => r.code !== 0);
    assert.equal(won.length, 1, `round ${String(round)}: one winner (${a.err} / ${b.err})`);
    assert.match(won[0]?.out ?? "", /^ran [AB]$/m);
    assert.match(won[0]?.out ?? "", /residency {4}\d+\.\d{6} J/);
    const loser = lost[0];
    assert.ok(loser);
    assert.equal(loser.code, 1);
    assert.match(loser.err, /PoolEmpty/);
    assert.equal(claims(name).length, 1, "the ledger holds one claim");
    verifyLedger(openPoolDir(poolDir(name)));
    assert.equal((await sbx(["pool", "destroy", "--store", store, "--pool", name])).code, 0);
  }
});

test("a claimant SIGKILLed after its claim: the item is never taken again; destroy ends its sandbox", async () => {
  const name = "killed";
  const made = await sbx([
    "pool",
    "create",
    "--store",
    store,
    "--pool",
    name,
    "--manifest",
    MANIFEST,
    "-n",
    "2",
  ]);
  assert.equal(made.code, 0, made.err);
  const victim = spawn(
    process.execPath,
    [SBX, "pool", "claim", "--store", store, "--pool", name, "--", "sh", "-c", "echo started; sleep 30"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  victim.stdout.on("data", (b: Buffer) => (out += b.toString()));
  const ended = new Promise((r) => victim.on("close", r));
  // Killed once the unit runs: the claim is committed and the thawed sandbox runs the unit.
  await waitFor(() => out.includes("started"), "the unit to start");
  victim.kill("SIGKILL");
  await ended;
  assert.deepEqual(
    claims(name).map((c) => c.item),
    ["item-0000"],
  );
  const orphan = readParked(join(poolDir(name), "items", "item-0000"));
  assert.ok(orphan !== null);
  const next = await sbx([
    "pool",
    "claim",
    "--store",
    store,
    "--pool",
    name,
    "--json",
    "--",
    "echo",
    "second",
  ]);
  assert.equal(next.code, 0, next.err);
  assert.equal(
    (JSON.parse(next.out) as { item: string }).item,
    "item-0001",
    "the next item, never the killed claim's",
  );
  assert.equal((JSON.parse(next.out) as { retries: number }).retries, 0, "no other writer raced it");
  const again = await sbx(["pool", "claim", "--store", store, "--pool", name, "--", "true"]);
  assert.equal(again.code, 1);
  assert.match(again.err, /PoolEmpty/);
  verifyLedger(openPoolDir(poolDir(name)));
  // The killed claimant's sandbox still runs its unit (its keeper holds it): destroy ends it.
  assert.ok(orphan.cgroup.dirs.some((d) => existsSync(d)));
  const gone = await sbx(["pool", "destroy", "--store", store, "--pool", name]);
  assert.equal(gone.code, 0, gone.err);
  assert.ok(
    orphan.cgroup.dirs.every((d) => !existsSync(d)),
    "no cgroup of the pool is left",
  );
  const s = openPoolDir(poolDir(name));
  assert.equal(s.account.closed, true);
  verifyLedger(s, { requireClosed: true });
  assert.ok(!s.payloads.some((e) => "item" in e && e.item === "item-0002"), "no item beyond the two");
});

test("every pool command has help", async () => {
  for (const c of ["create", "list", "claim", "evict", "close", "destroy", "verify"]) {
    const r = await sbx(["pool", c, "--help"]);
    assert.equal(r.code, 0, `${c}: ${r.err}`);
    assert.match(r.out + r.err, /usage: sbx pool/);
  }
});
