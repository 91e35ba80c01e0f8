// A real SIGKILL of the supervisor of a durable run under a grant (jcp §4.7, lifecycle/granted.ts)
// between an executed segment's append and its debit on the spend ledger (the named fault point
// durable:segment-appended, host/src/store/fault.ts SBX_STORE_CRASH_ON): the record keeps the
// segment, the ledger has no receipt citing it; the run is suspended without its supervisor and
// resumed under the grant, which debits the owed segment exactly once; after one more interval and
// close, the ledger verifies and `jcp verify`'s total is `sbx verify`'s. Then a kill -9 of the
// supervisor while the agent runs (sandbox-attest §13.10a item 8): the sandbox outlives it, the
// suspension without it recovers the interval from the cgroup's counters, and the resume under the
// grant debits the recovered interval once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { kinds, sbx, settled, waitFor } from "./lifecycle-helpers.ts";
import {
  granted,
  intervalSpends,
  ledgerSpends,
  resumeGranted,
  startAgent,
  verifyTotals,
} from "./granted-helpers.ts";

test("SIGKILL of the supervisor between a segment's append and its debit: the debit is made once at resume", async () => {
  const g = await granted("100J");
  try {
    const { store, id } = await startAgent(g, { SBX_STORE_CRASH_ON: "durable:segment-appended" });
    // The suspension seals the interval and appends its segment; the supervisor dies right there.
    const s = await sbx(["suspend", id, "--release", "--store", store]);
    assert.notEqual(s.code, 0, "the supervisor was killed before it acknowledged");
    await settled(store);
    assert.deepEqual(await kinds(store, id), ["executed"], "the segment is in the record");
    assert.equal(ledgerSpends(g.p("ledger")).length, 0, "and its debit is not on the ledger");
    // Parked without its supervisor, then resumed under the grant: the owed debit is made first.
    const d = await sbx(["suspend", id, "--release", "--store", store]);
    assert.equal(d.code, 0, d.err);
    const res = await resumeGranted(g, store, id, "ws2");
    assert.equal(res.code, 0, res.err);
    const first = intervalSpends(g.p("ledger"));
    assert.equal(first.length, 1, "the owed debit, once");
    assert.deepEqual(await kinds(store, id), ["executed", "suspended", "resumed"]);
    // One more interval: debited once by its (unkilled) supervisor; nothing cited twice.
    assert.equal((await sbx(["suspend", id, "--release", "--store", store])).code, 0);
    await waitFor(() => intervalSpends(g.p("ledger")).length === 2, "the second interval's debit");
    assert.equal((await sbx(["close", id, "--store", store])).code, 0);
    const all = ledgerSpends(g.p("ledger"));
    const cited = all.map((x) => x.cites?.attestation);
    assert.equal(new Set(cited).size, all.length, "no segment debited twice");
    assert.equal(intervalSpends(g.p("ledger")).length, 2, "two intervals, two interval debits");
    const { run, led } = await verifyTotals(g, store, id);
    assert.equal(run.valid, true);
    assert.deepEqual(
      { receipts: led.receipts, spent_uj: led.spent_uj },
      { receipts: all.length, spent_uj: run.energy.total_uj },
    );
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
});

test("kill -9 of a granted run's supervisor while it runs: the interval is recovered, then debited once", async () => {
  const g = await granted("100J");
  try {
    const { store, id } = await startAgent(g);
    // The open interval's file names the supervisor (§13.10a item 8).
    const live = join(store, "live");
    const f = readdirSync(live).find((n) => n.endsWith(".interval.json"));
    assert.ok(f !== undefined, "the open interval's file");
    const { pid } = JSON.parse(readFileSync(join(live, f), "utf8")) as { pid: number };
    process.kill(pid, "SIGKILL");
    await settled(store);
    const s = await sbx(["suspend", id, "--release", "--store", store]);
    assert.equal(s.code, 0, s.err);
    assert.match(s.err, /was recovered from the cgroup's counters/);
    assert.deepEqual(await kinds(store, id), ["executed", "suspended"]);
    assert.equal(ledgerSpends(g.p("ledger")).length, 0, "nothing debited yet");
    const res = await resumeGranted(g, store, id, "ws2");
    assert.equal(res.code, 0, res.err);
    assert.equal(intervalSpends(g.p("ledger")).length, 1, "the recovered interval, debited once");
    // The resumed agent runs to its end; its supervisor records and debits that interval.
    await waitFor(() => intervalSpends(g.p("ledger")).length === 2, "the second interval's debit");
    await settled(store);
    assert.equal((await sbx(["close", id, "--store", store])).code, 0);
    const all = ledgerSpends(g.p("ledger"));
    assert.equal(new Set(all.map((x) => x.cites?.attestation)).size, all.length, "no segment debited twice");
    const { run, led } = await verifyTotals(g, store, id);
    assert.equal(run.valid, true);
    assert.deepEqual(
      { receipts: led.receipts, spent_uj: led.spent_uj },
      { receipts: all.length, spent_uj: run.energy.total_uj },
    );
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
});
