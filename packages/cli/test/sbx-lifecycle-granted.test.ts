// Durable runs (§13) under a JCP grant chain (jcp §4.3–§4.7): grants_id bound into the run and every
// attestation, each executed interval and each resume's idle energy debited on the grant's ledger
// citing what it pays for, `sbx verify` on the run and `jcp verify` on the ledger agreeing on the
// total; a resume refused under a revoked grant and without the ledger; a debit that a crash left
// owed (the segment appended, its debit not) made once at the next resume, never twice.
import { test } from "node:test";
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { FileStore } from "@sbx/host/store";
import { fileIs, kinds, runIdOf, sbx, waitFor, workspaceWithAgent } from "./lifecycle-helpers.ts";
import {
  granted,
  intervalSpends,
  jcp,
  ledgerSpends,
  resumeGranted,
  startAgent,
  verifyTotals,
  waitKinds,
} from "./granted-helpers.ts";

test("a durable run under a grant: every interval and the idle energy debited; sbx verify and jcp verify agree", async () => {
  const g = await granted("100J");
  try {
    const { store, ws, id } = await startAgent(g);
    // Parked frozen a while (resident memory: idle energy to debit), then thawed by its supervisor.
    assert.equal((await sbx(["suspend", id, "--store", store])).code, 0);
    await new Promise((r) => setTimeout(r, 1500));
    const res = await sbx(["resume", id, "--store", store]);
    assert.equal(res.code, 0, res.err);
    const ws2 = ws;
    writeFileSync(join(ws2, "go"), "");
    await waitFor(() => fileIs(join(ws2, "result")) === "5", "the agent's result");
    await waitKinds(store, id, 4);
    const idle = BigInt(
      (
        decodeRecord((await FileStore.open(store, { readOnly: true }).readRecordBytes(id))!).record
          .segments[2] as { idle_uj: string }
      ).idle_uj,
    );
    assert.ok(idle > 0n, "idle energy was accounted");
    await waitFor(() => ledgerSpends(g.p("ledger")).length === 3, "three debits");
    assert.equal((await sbx(["close", id, "--store", store])).code, 0);
    // grants_id is the run's in every attestation, and not the address of {} (none).
    const fs = FileStore.open(store, { readOnly: true });
    const rec = decodeRecord((await fs.readRecordBytes(id))!).record;
    const atts: string[] = [];
    for (const s of rec.segments)
      if (s.kind === "executed") {
        const p = verifyAttestation(await fs.getSigned(s.attestation)).predicate;
        assert.equal(p.grants_id, rec.grantsId);
        atts.push(s.attestation);
      }
    const spends = ledgerSpends(g.p("ledger"));
    assert.deepEqual(
      spends.map((s) => s.cites?.attestation),
      [atts[0], spends[1]?.cites?.attestation, atts[1]],
      "executed, idle (citing the resumed segment), executed",
    );
    const { run, led } = await verifyTotals(g, store, id);
    assert.equal(run.valid, true);
    assert.equal(BigInt(run.energy.idle_uj), idle);
    assert.deepEqual(
      { receipts: led.receipts, spent_uj: led.spent_uj },
      { receipts: 3, spent_uj: run.energy.total_uj },
    );
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
});

test("a debit a crash left owed is made once at the next resume; a revoked grant refuses the resume", async () => {
  const g = await granted("100J");
  try {
    const { store, id } = await startAgent(g);
    assert.equal((await sbx(["suspend", id, "--release", "--store", store])).code, 0);
    // The state a SIGKILL between the segment's append and its debit leaves: the debit's entry,
    // the last of the append-only ledger, never written.
    await waitFor(() => ledgerSpends(g.p("ledger")).length === 1, "the first debit");
    rmSync(g.p("ledger/000000000001"));
    const bare = await sbx(["resume", id, "--store", store, "--workspace", g.p("wsx")]);
    assert.equal(bare.code, 2, "a run under grants needs --trust and --ledger to resume");
    const res = await resumeGranted(g, store, id, "ws2");
    assert.equal(res.code, 0, res.err);
    assert.equal(intervalSpends(g.p("ledger")).length, 1, "the owed debit, made once");
    assert.equal((await sbx(["suspend", id, "--release", "--store", store])).code, 0);
    await waitFor(() => intervalSpends(g.p("ledger")).length === 2, "the second interval's debit");
    const all = ledgerSpends(g.p("ledger"));
    const cited = all.map((s) => s.cites?.attestation);
    assert.equal(new Set(cited).size, all.length, "no segment debited twice");
    // Revoked by its issuer: the parked run does not resume, and nothing is appended.
    const rv = await jcp([
      "revoke",
      "--key",
      g.p("root.key"),
      "--chain",
      g.p("alice.chain"),
      "--list",
      g.p("revoked"),
    ]);
    assert.equal(rv.code, 0, rv.err);
    const before = await kinds(store, id);
    const refused = await resumeGranted(g, store, id, "ws3", false);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /Revoked/);
    assert.deepEqual(await kinds(store, id), before);
    assert.equal((await sbx(["close", id, "--store", store])).code, 0);
    const { run, led } = await verifyTotals(g, store, id);
    assert.equal(run.valid, true);
    assert.equal(led.spent_uj, run.energy.total_uj);
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
});

test("a durable interval is held to the grant's budget live: a burner under 2 J is stopped BudgetExhausted and debited", async () => {
  const g = await granted("2J");
  try {
    const store = g.p("store");
    const ws = workspaceWithAgent(g.p("ws"));
    const r = await sbx([
      ...["run", "--store", store, "--workspace", ws, "--grant", g.p("alice.chain"), ...g.flags],
      ...["--", "sh", "-c", "while :; do :; done"],
    ]);
    assert.equal(r.code, 1, r.err);
    const id = runIdOf(r.out);
    const fs = FileStore.open(store, { readOnly: true });
    const seg = decodeRecord((await fs.readRecordBytes(id))!).record.segments[0];
    assert.equal(seg?.kind, "executed");
    const p = verifyAttestation(await fs.getSigned(seg.attestation)).predicate;
    assert.equal(p.outcome.status === "spawn_failed" ? null : p.outcome.stopped, "BudgetExhausted");
    const spends = ledgerSpends(g.p("ledger"));
    assert.deepEqual(
      spends.map((s) => [s.uj, s.cites?.attestation]),
      [[p.energy.total_uj, seg.attestation]],
    );
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
});
