// §15.3–§15.4 on this host: pool items are real S1 sandboxes parked frozen (the kernel says so), a
// claim thaws one and the unit runs in it as a metered, journaled, attested interval whose first
// receipt carries the item's residency; the argv reaches the unit verbatim through a FIFO only the
// host can write; an item serves one claim, then its sandbox is gone.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { addressOf, testKey } from "@sbx/wire";
import { makeUnit } from "@sbx/sandbox-attest/unit";
import { checkClaimCharged, verifyLedger } from "@sbx/sandbox-attest/warmpool";
import { runUnit, type RunUnitResult } from "@sbx/host/run";
import {
  claimPoolItem,
  claimSandbox,
  createPoolDir,
  destroyPoolDir,
  listPool,
  openPoolDir,
  parkedFrozen,
  poolPaths,
  quoteArgv,
  readParked,
  type Claimed,
} from "@sbx/host/pool";
import { cgroupProcs } from "../../src/sandbox/cgroup.ts";
import { HostError } from "../../src/errors.ts";

const key = testKey("host");
const manifest = addressOf({ pool: "parked-test" });
const grants = addressOf({ grants: "parked-test" });
const dir = mkdtempSync(join(tmpdir(), "sbx-parked-"));
after(async () => {
  if (existsSync(poolPaths(dir).descriptor)) await destroyPoolDir(dir, key);
  rmSync(dir, { recursive: true, force: true });
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The kernel's own word on a cgroup: cgroup.events of v2, freezer.state of v1. */
function kernelFrozen(cgroupV2: string | null, dirs: readonly string[]): boolean {
  if (cgroupV2 !== null && existsSync(join(cgroupV2, "cgroup.freeze")))
    return /^frozen 1$/m.test(readFileSync(join(cgroupV2, "cgroup.events"), "utf8"));
  const name = dirs[0]?.split("/").pop() ?? "";
  return readFileSync(join("/sys/fs/cgroup/freezer", name, "freezer.state"), "utf8").trim() === "FROZEN";
}

function procState(pid: number): string {
  try {
    const s = readFileSync(`/proc/${String(pid)}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2).split(" ")[0] ?? "?";
  } catch {
    return "gone";
  }
}

async function runIn(c: Claimed, argv: string[]): Promise<RunUnitResult> {
  const unit = makeUnit({ argv, manifest, level: "S4" });
  assert.equal(addressOf(unit), c.claim.unit, "the claim names the unit that runs");
  return runUnit({
    argv,
    hostKey: key,
    unitId: addressOf(unit),
    unit,
    grantsId: grants,
    manifest,
    policy: addressOf({}),
    sandbox: { workspace: c.workspace },
    startSandbox: (a) => claimSandbox(c.itemDir, a),
    extraComponents: c.components,
    timeoutMs: 20_000,
  });
}

function claimFor(argv: string[], item?: string): Claimed {
  const unit = addressOf(makeUnit({ argv, manifest, level: "S4" }));
  return claimPoolItem(dir, { unit, grants, key, ...(item ? { item } : {}) });
}

test("pool items are real sandboxes, parked frozen as the kernel reports", async () => {
  await createPoolDir(dir, { name: "parked", manifest, size: 3, key, parked: {} });
  const { items } = listPool(dir);
  assert.equal(items.length, 3);
  for (const it of items) {
    const info = readParked(poolPaths(dir).item(it.item));
    assert.ok(info !== null, "the item records its sandbox");
    assert.ok(kernelFrozen(info.cgroup.v2, info.cgroup.dirs), "the kernel reports the cgroup frozen");
    assert.equal(parkedFrozen(info), true);
    assert.equal(it.frozen, true);
    const procs = info.cgroup.dirs.flatMap(cgroupProcs);
    assert.ok(procs.length >= 2, "bwrap's monitor and the sandbox's processes are in the cgroup");
    // Every task of the sandbox is stopped by the freezer: none is running.
    for (const pid of procs) assert.notEqual(procState(pid), "R", `pid ${String(pid)} runs`);
    assert.ok(BigInt(it.accounted_uj) > 0n, "provisioning a sandbox is never free");
    // The process that made the item is gone once `sbx pool create` ends: the cgroups are held, so
    // no other host process's stale sweep removes them while a claimant still reads their counters.
    for (const d of info.cgroup.dirs) assert.ok(existsSync(join(d, "sbx-hold")), `${d} is held`);
  }
});

test("a claim runs the unit in the thawed sandbox; its first receipt carries the residency", async () => {
  writeFileSync(join(poolPaths(dir).workspace("item-0000"), "input.txt"), "x".repeat(50_000));
  await sleep(300);
  const argv = ["sh", "-c", "wc -c < input.txt; id -u; hostname; pwd; cat /proc/net/dev | wc -l"];
  const c = claimFor(argv);
  assert.equal(c.claim.item, "item-0000");
  assert.equal(c.parked, true);
  assert.ok(BigInt(c.claim.residency_uj) > 0n, "the claim carries accrued residency");
  const mem = c.components.find((x) => x.provenance === "estimated" && x.model.name === "ccf.memory/1");
  assert.ok(mem && BigInt(mem.uj) > 0n, "the frozen sandbox's memory is charged");
  assert.ok(mem.provenance === "estimated" && /cgroup memory/.test(mem.source), "with its basis");
  const r = await runIn(c, argv);
  assert.deepEqual(r.outcome, { status: "exited", exit_code: 0 });
  const [bytes, uid, host, cwd, netLines] = r.stdout.toString().trim().split("\n");
  assert.equal(bytes, "50000", "the unit sees the item's workspace");
  assert.equal(uid, "1000", "as the sandbox's user");
  assert.equal(host, "sandbox");
  assert.equal(cwd, "/work");
  assert.equal(netLines, "3", "only loopback: no network");
  assert.equal(r.level, "S4", "the level a sandboxed run states");
  assert.ok(r.provided !== null);
  // The first receipt holds the claim's warmpool components beside the interval's own.
  const wp = r.receipt.receipt.components.filter((x) => x.domain === "warmpool");
  assert.ok(wp.length > 0, "warmpool components in the first receipt");
  checkClaimCharged(c.state, c.claim, r.receipt.receipt);
  assert.ok(BigInt(r.receipt.receipt.total_uj) > BigInt(c.claim.accrued_uj));
  const starts = r.journal.events.filter((e) => e.type === "process.start");
  assert.equal(starts.length, 1, "the journal holds the unit's start");
  // Used once: the sandbox is gone, and neither the ledger nor the sandbox takes a second claim.
  const info = readParked(c.itemDir);
  assert.ok(info !== null && info.cgroup.dirs.every((d) => !existsSync(d)), "its cgroup is removed");
  assert.throws(
    () => claimSandbox(c.itemDir, ["true"]),
    (e: unknown) => e instanceof HostError && e.code === "PoolItemLost",
  );
  assert.throws(
    () => claimFor(["true"], "item-0000"),
    (e: unknown) => e instanceof Error && "code" in e && e.code === "DoubleClaim",
  );
});

test("the argv reaches the unit verbatim; the hand-off is spent once the unit runs", async () => {
  const argv = ["printf", "[%s]", "a b", "it's", "x\ny", "$(id)", "`id`", ";exit 9", "\\n", ""];
  const c = claimFor(argv);
  const r = await runIn(c, argv);
  assert.deepEqual(r.outcome, { status: "exited", exit_code: 0 });
  assert.equal(
    r.stdout.toString(),
    argv
      .slice(2)
      .map((a) => `[${a}]`)
      .join(""),
  );
  assert.equal(quoteArgv(["a'b"]), `'a'\\''b'`);

  // After the hand-off nothing reads `go` any more: a write from the unit finds no reader (it would
  // block; `timeout` ends it), and the control folder holds the two FIFOs of this item only.
  const probe = ["sh", "-c", "ls -A /.sbx-claim; timeout 1 sh -c 'echo x >/.sbx-claim/go'; echo rc=$?"];
  const d = claimFor(probe);
  const q = await runIn(d, probe);
  assert.equal(q.stdout.toString(), "go\nready\nrc=124\n");
  verifyLedger(openPoolDir(dir), { hosts: [key.did] });
});

test("destroy ends every sandbox and keeps the ledger verifiable", async () => {
  const infos = listPool(dir).items.map((it) => readParked(poolPaths(dir).item(it.item)));
  await destroyPoolDir(dir, key);
  for (const info of infos)
    if (info !== null)
      assert.ok(
        info.cgroup.dirs.every((d) => !existsSync(d)),
        "no cgroup is left",
      );
  assert.ok(!existsSync(poolPaths(dir).items));
  const s = openPoolDir(dir);
  assert.equal(s.account.closed, true);
  verifyLedger(s, { hosts: [key.did], requireClosed: true });
});
