// jcp §4.3 "Overshoot", sandbox-attest §5.6 item 5: work past a budget is always charged. 20 runs
// on a nearly spent grant: every run that ran is on the ledger with its whole metered energy (the
// debit up to what was left plus the recorded overshoot, never less), the overshoot is signed in
// the receipt and in the run's attestation, and once the grant is spent out every later run is
// refused at start (`BudgetExhausted`) before anything runs. A run whose remainder is below what
// one metering period can use is refused at start too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { payloadOf, type Envelope } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { periodFloorUj } from "@sbx/host/grants";
import { readLedger } from "@sbx/host/ledger";
import { runCli } from "../src/main.ts";

async function cli(tool: "sbx" | "jcp", argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(tool, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

interface Receipt {
  uj: string;
  overshoot_uj?: string;
  cites?: { attestation: string };
}

async function setup(uj: string) {
  const dir = mkdtempSync(join(tmpdir(), "sbx-overshoot-"));
  const p = (n: string) => join(dir, n);
  for (const k of ["root", "alice", "host"])
    assert.equal((await cli("jcp", ["keygen", "--out", p(`${k}.key`)])).code, 0);
  const issued = await cli("jcp", [
    ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), "--resource", "/fs/work/**"],
    ...["--action", "read", "--action", "write", "--uj", uj, "--depth", "0", "--ttl", "86400000"],
    ...["--out", p("alice.chain")],
  ]);
  assert.equal(issued.code, 0, issued.err);
  mkdirSync(p("ws"));
  const run = [
    ...["run", "--key", p("host.key"), "--grant", p("alice.chain"), "--trust", p("root.key")],
    ...["--ledger", p("ledger"), "--workspace", p("ws"), "--json"],
  ];
  // A spend by another writer (e.g. another host) on the same ledger.
  const spend = (amount: bigint) =>
    cli("jcp", [
      ...["spend", "--host-key", p("host.key"), "--chain", p("alice.chain"), "--ledger", p("ledger")],
      ...["--uj", amount.toString(), "--root", p("root.key")],
    ]);
  const receipts = () => readLedger(p("ledger")).receipts.map((e) => payloadOf(e) as unknown as Receipt);
  const proof = () =>
    existsSync(p("ws/proof")) ? readFileSync(p("ws/proof"), "utf8").split("\n").filter(Boolean).length : 0;
  return { dir, p, run, spend, receipts, proof };
}

const BURN = ["--", "sh", "-c", "echo ran >> proof; while :; do :; done"];

test("20 runs on a nearly spent grant: every run that ran is charged its whole energy, the overshoot recorded, then refused", async () => {
  const budget = 5_000_000n;
  const s = await setup(`${budget}`);
  try {
    // Nearly spent: one metering period's worth and a little more is left.
    const left = periodFloorUj() + 150_000n;
    assert.equal((await s.spend(budget - left)).code, 0);
    let metered = 0n;
    let ran = 0;
    let refused = 0;
    for (let i = 0; i < 20; i++) {
      const before = s.proof();
      // In the first run another writer spends all but 1 µJ once the unit runs: its energy is then
      // far past what is left when it is sealed (jcp §4.3: the overshoot case, made certain).
      let racer: Promise<unknown> = Promise.resolve();
      if (i === 0) {
        racer = (async () => {
          while (s.proof() === before) await new Promise((r) => setTimeout(r, 20));
          const rest = s.receipts().reduce((a, r) => a - BigInt(r.uj), budget);
          assert.equal((await s.spend(rest - 1n)).code, 0);
        })();
      }
      const r = await cli("sbx", [...s.run, "--out", s.p(`out${i}`), ...BURN]);
      await racer;
      if (s.proof() > before) {
        assert.notEqual(r.out, "", r.err);
        assert.doesNotMatch(r.err, /Overspend/);
        const j = JSON.parse(r.out) as {
          energy: { total_uj: string };
          outcome: { overshoot_uj?: string };
          grant: { overshoot_uj: string; spent_uj: string; receipt: Envelope };
        };
        ran++;
        metered += BigInt(j.energy.total_uj);
        const receipt = payloadOf(j.grant.receipt) as unknown as Receipt;
        assert.equal(BigInt(receipt.uj) + BigInt(receipt.overshoot_uj ?? "0"), BigInt(j.energy.total_uj));
        assert.equal(j.grant.overshoot_uj, receipt.overshoot_uj ?? "0");
        // The attestation states the overshoot the host saw at the seal, signed.
        const att = verifyAttestation(JSON.parse(readFileSync(s.p(`out${i}/attestation.json`), "utf8")));
        const outcome = att.predicate.outcome as { overshoot_uj?: string };
        if (i === 0) {
          assert.ok(BigInt(receipt.overshoot_uj ?? "0") > 0n, "the first run's overshoot is recorded");
          assert.equal(outcome.overshoot_uj, receipt.overshoot_uj);
          assert.equal(receipt.uj, "1");
        }
      } else {
        refused++;
        assert.equal(r.code, 1);
        assert.match(r.err, /BudgetExhausted/);
        assert.equal(s.proof(), before, "a refused run runs nothing");
      }
    }
    // Every run that ran is on the ledger, never less than it used: debit plus overshoot.
    const runs = s.receipts().filter((r) => r.cites !== undefined);
    assert.equal(runs.length, ran);
    const charged = runs.reduce((a, r) => a + BigInt(r.uj) + BigInt(r.overshoot_uj ?? "0"), 0n);
    assert.equal(charged, metered);
    assert.equal(s.proof(), ran, "every run that ran left its line, and was charged");
    assert.equal(ran + refused, 20);
    assert.ok(refused >= 19, `the grant spent out refuses further work (${refused} refused)`);
    // The grant is spent out: the ledger's debits add up to the budget exactly.
    assert.equal(
      s.receipts().reduce((a, r) => a + BigInt(r.uj), 0n),
      budget,
    );
    const over = runs.reduce((a, r) => a + BigInt(r.overshoot_uj ?? "0"), 0n);
    console.log(`20 runs: ${ran} ran, ${refused} refused; metered ${metered} µJ, overshoot ${over} µJ`);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("a run with less left than one metering period can use is refused at start (BudgetExhausted)", async () => {
  const s = await setup("2J");
  try {
    const left = periodFloorUj() - 1n;
    assert.equal((await s.spend(2_000_000n - left)).code, 0);
    const r = await cli("sbx", [...s.run, ...BURN]);
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, /BudgetExhausted/);
    assert.equal(s.proof(), 0, "nothing ran");
    assert.equal(s.receipts().length, 1, "nothing was debited");
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});
