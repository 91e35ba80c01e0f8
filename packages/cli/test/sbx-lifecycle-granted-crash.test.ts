// A real SIGKILL of the supervisor of a durable run under a grant (jcp §4.7, lifecycle/granted.ts)
// between an executed segment's append and its debit on the spend ledger (the named fault point
// durable:segment-appended, host/src/store/fault.ts SBX_STORE_CRASH_ON): the record keeps the
// segment, the ledger has no receipt citing it; the run is suspended without its supervisor and
// resumed under the grant, which debits the owed segment exactly once; after one more interval and
// close, the ledger verifies and `jcp verify`'s total is `sbx verify`'s.
import { test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
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
