// jcp §4.3 "Overshoot", sandbox-attest §5.6 item 5: work past a budget is always charged. 20 runs
// on a nearly spent grant (another writer spending beside them): each run is on the ledger by a
// receipt citing its attestation with its whole metered energy (the debit up to what was left plus
// the recorded overshoot, never less), the last one's overshoot is signed in the receipt and in the
// run's attestation, and once the grant is spent out a further run is refused at start
// (`BudgetExhausted`) before anything runs. A run whose remainder is below what
// one metering period can use is refused at start too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { envelopeAddress, payloadOf, type Envelope } from "@sbx/wire";
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
const SHORT = ["--", "sh", "-c", "echo ran >> proof"];

interface RunJson {
  energy: { total_uj: string };
  grant: { overshoot_uj: string; spent_uj: string; receipt: Envelope };
}

test("20 runs on a nearly spent grant: each is charged its whole metered energy on the ledger, the overshoot recorded, then refused", async () => {
  const budget = 10_000_000n;
  const s = await setup(`${budget}`);
  try {
    // Nearly spent: one metering period's worth, and 100 mJ for each of 19 short runs (~25 mJ each).
    const left = periodFloorUj() + 19n * 100_000n;
    assert.equal((await s.spend(budget - left)).code, 0);
    const metered = new Map<string, bigint>();
    for (let i = 0; i < 20; i++) {
      const before = s.proof();
      // The 20th burns, and another writer spends all but 1 µJ once it runs: its energy is then far
      // past what is left when it is sealed (jcp §4.3: the overshoot case, made certain).
      let racer: Promise<unknown> = Promise.resolve();
      if (i === 19)
        racer = (async () => {
          while (s.proof() === before) await new Promise((r) => setTimeout(r, 20));
          const rest = s.receipts().reduce((a, r) => a - BigInt(r.uj), budget);
          assert.equal((await s.spend(rest - 1n)).code, 0);
        })();
      const r = await cli("sbx", [...s.run, "--out", s.p(`out${i}`), ...(i === 19 ? BURN : SHORT)]);
      await racer;
      assert.equal(s.proof(), before + 1, `run ${i} ran: ${r.err}`);
      assert.doesNotMatch(r.err, /Overspend/);
      // What the run used, from its signed attestation.
      const env = JSON.parse(readFileSync(s.p(`out${i}/attestation.json`), "utf8")) as Envelope;
      const att = verifyAttestation(env);
      metered.set(envelopeAddress(env), BigInt(att.predicate.energy.total_uj));
      const j = JSON.parse(r.out) as RunJson;
      const receipt = payloadOf(j.grant.receipt) as unknown as Receipt;
      assert.equal(j.grant.overshoot_uj, receipt.overshoot_uj ?? "0", `run ${i}`);
      const outcome = att.predicate.outcome as { overshoot_uj?: string };
      if (i === 19) {
        assert.ok(BigInt(receipt.overshoot_uj ?? "0") > 0n, "the last run's overshoot is recorded");
        assert.equal(outcome.overshoot_uj, receipt.overshoot_uj, "the attestation signs the overshoot");
        assert.equal(receipt.uj, "1", "what was left is debited");
      }
    }
    // The grant is spent out: a further run is refused at start and runs nothing.
    const r = await cli("sbx", [...s.run, ...SHORT]);
    assert.equal(r.code, 1);
    assert.match(r.err, /BudgetExhausted/);
    assert.equal(s.proof(), 20, "a refused run runs nothing");
    // On the ledger, each run's receipt cites its attestation and charges all it metered (debit
    // plus overshoot, never less); the other writer's spends cite nothing.
    const runs = s.receipts().filter((x) => x.cites !== undefined);
    assert.deepEqual(runs.map((x) => x.cites?.attestation).sort(), [...metered.keys()].sort());
    for (const x of runs)
      assert.equal(
        BigInt(x.uj) + BigInt(x.overshoot_uj ?? "0"),
        metered.get(x.cites!.attestation),
        x.cites!.attestation,
      );
    const total = [...metered.values()].reduce((a, b) => a + b, 0n);
    const charged = runs.reduce((a, x) => a + BigInt(x.uj) + BigInt(x.overshoot_uj ?? "0"), 0n);
    assert.equal(charged, total);
    assert.equal(
      s.receipts().reduce((a, x) => a + BigInt(x.uj), 0n),
      budget,
      "debits add up to the budget",
    );
    const over = runs.reduce((a, x) => a + BigInt(x.overshoot_uj ?? "0"), 0n);
    console.log(`20 runs: metered ${total} µJ, charged ${charged} µJ, overshoot ${over} µJ`);
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
