// `sbx on-event` (jcp §4.6 driving sandbox-attest §5.6 runs): a standing policy with rate 3/min fed
// 10 events starts exactly 3 governed runs, each under its own minted child, each debited on the
// spend ledger; the other 7 start nothing and say RateExceeded; the mint ledger (an append-only
// log folder) verifies with 3 children; a replayed event and an event no trigger admits start
// nothing; a run whose held grant has nothing left is refused at its start.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { payloadOf, type Envelope } from "@sbx/wire";
import { readLedger, readMintLog } from "@sbx/host/ledger";
import { cli, parse, setup } from "./on-event-helpers.ts";

test("a standing policy with rate 3/min fed 10 events starts exactly 3 governed runs", async () => {
  const s = await setup("3/60000", "100J", "5J");
  try {
    const evs = Array.from({ length: 10 }, (_, i) => ({
      type: "push",
      source: "ci",
      id: `e${i}`,
      at_ms: s.now,
    }));
    const r = await cli("sbx", [
      ...s.args,
      ...s.events(evs),
      ...["--out", s.p("out"), "--json", "--", "sh", "-c", "echo ran > /work/mark"],
    ]);
    assert.equal(r.code, 1, r.err); // events were refused
    const { events, summary } = parse(r.out);
    assert.equal(events.length, 10);
    assert.deepEqual(summary, { events: 10, minted: 3, ran: 3, refused: { RateExceeded: 7 } });
    const ran = events.filter((e) => e.status === "ran");
    assert.deepEqual(
      ran.map((e) => e.n),
      [1, 2, 3],
    );
    for (const e of ran) {
      assert.equal(e.exit, 0);
      assert.equal(e.run!.outcome.status, "exited");
      assert.equal(e.run!.grant.spent_uj, e.run!.energy.total_uj);
      // each ran in its own workspace, under its own minted child (out/<mint seq>: here seq = n)
      assert.equal(e.mint_seq, e.n);
      assert.equal(readFileSync(s.p(`out/${e.n}/work/mark`), "utf8"), "ran\n");
      const chain = JSON.parse(readFileSync(s.p(`out/${e.n}/grant.chain`), "utf8")) as Envelope[];
      const leaf = payloadOf(chain.at(-1)!) as { mint?: { event: string }; holder: string };
      assert.equal(leaf.mint?.event, e.event);
    }
    assert.equal(new Set(ran.map((e) => e.child)).size, 3);
    for (const e of events.filter((x) => x.status === "refused")) {
      assert.equal(e.code, "RateExceeded");
      assert.equal(e.child, undefined);
      assert.equal(existsSync(s.p(`out/${e.n}`)), false); // nothing started for it
    }
    // The mint ledger is a log folder that verifies with exactly 3 children.
    const v = await cli("jcp", [
      ...["standing", "verify", "--policy", s.p("policy.json"), "--held", s.p("held.chain")],
      ...["--ledger", s.p("mints"), "--trust", s.p("root.key"), "--json"],
    ]);
    assert.equal(v.code, 0, v.err);
    const lv = JSON.parse(v.out) as { length: number; children: string[]; total_uj: string };
    assert.equal(lv.length, 3);
    assert.deepEqual(
      lv.children,
      ran.map((e) => e.child),
    );
    assert.equal(lv.total_uj, "15000000");
    // The spend ledger holds one debit per run, each under its child, equal to the run's energy.
    const led = readLedger(s.p("ledger"));
    assert.equal(led.receipts.length, 3);
    const debits = led.receipts.map((x) => payloadOf(x) as { grant: string; uj: string });
    assert.deepEqual(
      debits.map((d) => [d.grant, d.uj]),
      ran.map((e) => [e.child, e.run!.energy.total_uj]),
    );
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("on-event: a replayed, untriggered or malformed event starts nothing, and says why", async () => {
  const s = await setup("100/60000", "100J", "5J");
  try {
    const ok = { type: "push", source: "ci", id: "a", at_ms: s.now };
    const r = await cli("sbx", [
      ...s.args,
      ...s.events([ok, ok, { type: "tag", source: "ci", at_ms: s.now }, { type: "push", source: "ci" }]),
      ...["--json", "--", "true"],
    ]);
    assert.equal(r.code, 1, r.err);
    const { events, summary } = parse(r.out);
    assert.deepEqual(
      events.map((e) => (e.status === "ran" ? "ran" : e.code)),
      ["ran", "EventReplayed", "TriggerMismatch", "BadEvent"],
    );
    assert.deepEqual(summary, {
      events: 4,
      minted: 1,
      ran: 1,
      refused: { EventReplayed: 1, TriggerMismatch: 1, BadEvent: 1 },
    });
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("on-event: an event whose held grant has nothing left mints but starts no run (BudgetExhausted)", async () => {
  const s = await setup("100/60000", "1J", "1J");
  try {
    // The held grant's whole budget is already spent on the ledger the runs are debited on.
    const spent = await cli("jcp", [
      ...["spend", "--host-key", s.p("host.key"), "--chain", s.p("held.chain"), "--ledger", s.p("ledger")],
      ...["--uj", "1J", "--root", s.p("root.key")],
    ]);
    assert.equal(spent.code, 0, spent.err);
    const ev = { type: "push", source: "ci", id: "b", at_ms: s.now };
    const r = await cli("sbx", [...s.args, ...s.events([ev]), "--json", "--", "sh", "-c", "echo ran"]);
    assert.equal(r.code, 1, r.err);
    const { events } = parse(r.out);
    assert.equal(events[0]!.status, "refused");
    assert.equal(events[0]!.code, "BudgetExhausted");
    assert.notEqual(events[0]!.child, undefined); // it was minted: the mint ledger is the record
    assert.doesNotMatch(r.err, /ran/);
    assert.equal(readLedger(s.p("ledger")).receipts.length, 1);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("on-event and standing mint: usage errors and an older whole-file mint ledger exit 2", async () => {
  const s = await setup("3/60000", "100J", "5J");
  try {
    const missing = await cli("sbx", ["on-event", "--standing", s.p("policy.json"), "--", "true"]);
    assert.equal(missing.code, 2); // a usage error: the required options are named
    const noCmd = await cli("sbx", [...s.args, "--events", s.p("none.jsonl")]);
    assert.equal(noCmd.code, 2);
    const noFile = await cli("sbx", [...s.args, "--events", s.p("none.jsonl"), "--", "true"]);
    assert.equal(noFile.code, 2);
    assert.match(noFile.err, /Unreadable/);
    // A bad sandbox flag is a usage error before any event is read: nothing is minted for it.
    const ev = { type: "push", source: "ci", id: "u", at_ms: s.now };
    const badCpus = await cli("sbx", [...s.args, ...s.events([ev]), "--cpus", "many", "--", "true"]);
    assert.equal(badCpus.code, 2, badCpus.err);
    assert.match(badCpus.err, /--cpus/);
    assert.equal(readMintLog(s.p("mints")).entries.length, 0, "no child minted");
    // A mint ledger of an older jcp (one JSON file) is not appended to: BadLedger, nothing minted.
    writeFileSync(s.p("old-ledger.json"), JSON.stringify({ entries: [], events: [], children: [] }));
    writeFileSync(s.p("ev.json"), JSON.stringify({ type: "push", source: "ci", at_ms: s.now }));
    const old = await cli("jcp", [
      ...["standing", "mint", "--key", s.p("alice.key"), "--policy", s.p("policy.json")],
      ...["--held", s.p("held.chain"), "--ledger", s.p("old-ledger.json"), "--event", s.p("ev.json")],
      ...["--out", s.p("child.chain")],
    ]);
    assert.equal(old.code, 2);
    assert.match(old.err, /BadLedger/);
    assert.equal(existsSync(s.p("child.chain")), false);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});
