// Durable runs (§13) under a grant set (jcp §4.3, §4.7; lifecycle/granted.ts): each interval and
// each resume's idle energy fills the chains in order, as a one-shot run's debit does, one receipt
// per chain that takes a share, all citing what they pay for; `sbx verify`'s total is the sum of
// `jcp verify`'s spent over the chains, and each segment is paid exactly its energy. A real SIGKILL
// of the supervisor between the first chain's share and the second's (the named fault point
// grant:share-debited) loses nothing and doubles nothing: the resume pays only the rest. A resume is
// refused when any chain of the set is revoked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addressOf, payloadOf, type Envelope } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { FileStore } from "@sbx/host/store";
import { idleCites } from "@sbx/host/durable";
import { fileIs, kinds, sbx, settled, waitFor } from "./lifecycle-helpers.ts";
import {
  granted,
  jcp,
  ledgerSpends,
  resumeGranted,
  startAgent,
  waitKinds,
  type Granted,
} from "./granted-helpers.ts";

/** Chain A (alice.chain, `ujA`) and chain B (100 J), both over /fs/work/**, as the set set.json. */
async function grantSet(ujA: string) {
  const g = await granted(ujA);
  const b = await jcp([
    ...["issue", "--key", g.p("root.key"), "--holder", g.p("alice.key"), "--resource", "/fs/work/**"],
    ...["--action", "read", "--action", "write", "--uj", "100J", "--depth", "0", "--ttl", "86400000"],
    ...["--out", g.p("b.chain")],
  ]);
  assert.equal(b.code, 0, b.err);
  const chain = (f: string) => JSON.parse(readFileSync(g.p(f), "utf8")) as Envelope[];
  writeFileSync(g.p("set.json"), JSON.stringify([chain("alice.chain"), chain("b.chain")]));
  const leaf = (f: string) => addressOf(payloadOf(chain(f).at(-1)!));
  return { g, leafA: leaf("alice.chain"), leafB: leaf("b.chain") };
}

/** What `jcp verify` says chain `f` spent on the ledger. */
async function spentOn(g: Granted, f: string): Promise<bigint> {
  const v = await jcp([
    ...["verify", g.p(f), "--trust", g.p("root.key"), "--ledger", g.p("ledger")],
    ...["--host", g.p("host.key"), "--json"],
  ]);
  assert.equal(v.code, 0, v.err);
  return BigInt((JSON.parse(v.out) as { ledger: { spent_uj: string } }).ledger.spent_uj);
}

/**
 * The run is paid exactly: every executed segment's receipts add up to its energy, every resumed
 * segment's to its idle energy; sbx verify's total is A's spent plus B's; A spent its whole budget.
 */
async function paidExactly(g: Granted, store: string, id: string, ujA: bigint, leaves: string[]) {
  const fs = FileStore.open(store, { readOnly: true });
  const rec = decodeRecord((await fs.readRecordBytes(id as never))!).record;
  const spends = ledgerSpends(g.p("ledger")) as {
    uj: string;
    grant?: string;
    cites?: { attestation: string };
  }[];
  for (const s of spends) assert.ok(leaves.includes(s.grant ?? ""), "each receipt is on a leaf of the set");
  const paid = (a: string) =>
    spends.filter((s) => s.cites?.attestation === a).reduce((t, s) => t + BigInt(s.uj), 0n);
  for (const seg of rec.segments)
    if (seg.kind === "executed") {
      const p = verifyAttestation(await fs.getSigned(seg.attestation)).predicate;
      assert.equal(paid(seg.attestation), BigInt(p.energy.total_uj), "an interval paid its energy, once");
    } else if (seg.kind === "resumed" && BigInt(seg.idle_uj) > 0n)
      assert.equal(paid(idleCites(seg).attestation), BigInt(seg.idle_uj), "idle energy paid, once");
  const v = await sbx(["verify", id, "--store", store, "--trust", g.p("host.key"), "--json"]);
  assert.equal(v.code, 0, v.out + v.err);
  const run = JSON.parse(v.out) as { valid: boolean; energy: { total_uj: string } };
  assert.equal(run.valid, true);
  const a = await spentOn(g, "alice.chain");
  const b = await spentOn(g, "b.chain");
  assert.equal(a, ujA, "the first chain is filled first, to its budget");
  assert.equal(a + b, BigInt(run.energy.total_uj), "sbx verify's total is the chains' spent together");
  assert.equal(
    spends.reduce((t, s) => t + BigInt(s.uj), 0n),
    BigInt(run.energy.total_uj),
  );
}

test("a durable run under a grant set: intervals and idle energy fill the chains in order; the totals agree", async () => {
  const { g, leafA, leafB } = await grantSet("1000");
  try {
    const { store, ws, id } = await startAgent(g, {}, g.p("set.json"));
    assert.equal((await sbx(["suspend", id, "--store", store])).code, 0);
    await new Promise((r) => setTimeout(r, 1000));
    const res = await sbx(["resume", id, "--store", store]);
    assert.equal(res.code, 0, res.err);
    writeFileSync(join(ws, "go"), "");
    await waitFor(() => fileIs(join(ws, "result")) === "5", "the agent's result");
    await waitKinds(store, id, 4);
    // The first interval (≫ 1 mJ) took all of A and the rest on B: two receipts; then B alone.
    await waitFor(() => ledgerSpends(g.p("ledger")).length === 4, "the debits");
    const first = ledgerSpends(g.p("ledger")).slice(0, 2) as { uj: string; grant?: string }[];
    assert.deepEqual(
      first.map((s) => [s.grant, s.uj === "1000"]),
      [
        [leafA, true],
        [leafB, false],
      ],
    );
    await paidExactly(g, store, id, 1000n, [leafA, leafB]);
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
});

test("SIGKILL of the supervisor between two chains' shares of one interval: the resume pays only the rest, once; a revoked chain refuses the resume", async () => {
  const { g, leafA, leafB } = await grantSet("1000");
  try {
    const { store, id } = await startAgent(g, { SBX_STORE_CRASH_ON: "grant:share-debited" }, g.p("set.json"));
    const s = await sbx(["suspend", id, "--release", "--store", store]);
    assert.notEqual(s.code, 0, "the supervisor was killed before it acknowledged");
    await settled(store);
    assert.deepEqual(await kinds(store, id), ["executed"]);
    const part = ledgerSpends(g.p("ledger")) as { uj: string; grant?: string }[];
    assert.deepEqual(
      part.map((x) => [x.grant, x.uj]),
      [[leafA, "1000"]],
      "only the first chain's share was recorded",
    );
    assert.equal((await sbx(["suspend", id, "--release", "--store", store])).code, 0);
    const res = await resumeGranted(g, store, id, "ws2");
    assert.equal(res.code, 0, res.err);
    const owed = ledgerSpends(g.p("ledger")) as { uj: string; grant?: string }[];
    assert.equal(owed.length, 2, "the rest, once");
    assert.equal(owed[1]!.grant, leafB);
    assert.equal((await sbx(["suspend", id, "--release", "--store", store])).code, 0);
    await waitFor(() => ledgerSpends(g.p("ledger")).length === 3, "the second interval's debit");
    // Chain B revoked: the parked run does not resume under the set, and nothing is appended.
    const rv = await jcp([
      "revoke",
      "--key",
      g.p("root.key"),
      "--chain",
      g.p("b.chain"),
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
    await paidExactly(g, store, id, 1000n, [leafA, leafB]);
  } finally {
    rmSync(g.dir, { recursive: true, force: true });
  }
});
