// A crashed `sbx on-event` loses nothing (jcp §4.6 "Runs driven by events", host/src/standing/
// runlog.ts): a real SIGKILL between a child's mint and the start of its run (the named fault point
// on-event:minted, host/src/store/fault.ts SBX_STORE_CRASH_ON) leaves the child on the mint ledger
// with no start on its run log. The same event fed again then runs that child (not EventReplayed),
// once; the rate still counts that event once; four `--pending` invocations racing for one such
// child run it exactly once. A SIGKILL after the start was claimed (on-event:run-claimed) leaves a
// child that is never started again on its own: RunInterrupted, to the event and to --pending;
// `--rerun-interrupted` starts it again, once, even with two such invocations racing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { payloadOf } from "@sbx/wire";
import { readLedger } from "@sbx/host/ledger";
import { readMintLog } from "@sbx/host/ledger";
import { readLog } from "@sbx/host/log";
import { runLogOf } from "@sbx/host/standing";
import { sbx } from "./lifecycle-helpers.ts";
import { cli, parse, setup } from "./on-event-helpers.ts";

const MARK = ["--", "sh", "-c", "echo ran >> /work/mark"];

/** The children the mint ledger holds, and the grants the spend ledger's debits are on. */
function ledgers(s: { p: (n: string) => string }) {
  const minted = readMintLog(s.p("mints")).entries.map((e) => (payloadOf(e) as { child: string }).child);
  const debited = existsSync(s.p("ledger"))
    ? readLedger(s.p("ledger")).receipts.map((x) => (payloadOf(x) as { grant: string }).grant)
    : [];
  return { minted, debited, runLog: readLog(runLogOf(s.p("mints"))).entries.length };
}

/** Runs `sbx on-event` as its own process and lets it die at the named fault point. */
async function crashAt(s: Awaited<ReturnType<typeof setup>>, point: string, ev: object) {
  const r = await sbx([...s.args, ...s.events([ev]), "--out", s.p("out"), "--json", ...MARK], {
    SBX_STORE_CRASH_ON: point,
  });
  assert.equal(r.code, null, `killed at ${point}: ${r.err}`);
  assert.equal(r.out, "", "it died before it reported anything");
}

test("SIGKILL between a child's mint and its run: the same event runs it once, and the rate counts it once", async () => {
  const s = await setup("2/60000", "100J", "5J");
  try {
    const a = { type: "push", source: "ci", id: "a", at_ms: s.now };
    await crashAt(s, "on-event:minted", a);
    const after = ledgers(s);
    assert.equal(after.minted.length, 1, "the child is on the mint ledger");
    assert.equal(after.runLog, 0, "its run never started");
    assert.deepEqual(after.debited, []);
    assert.equal(existsSync(s.p("out/1")), false);

    // Fed again: the child minted for it is run (recovered), not refused EventReplayed.
    const again = await cli("sbx", [...s.args, ...s.events([a]), "--out", s.p("out"), "--json", ...MARK]);
    assert.equal(again.code, 0, again.err);
    const { events, summary } = parse(again.out);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.status, "ran");
    assert.equal(events[0]!.recovered, true);
    assert.equal(events[0]!.mint_seq, 1);
    assert.equal(events[0]!.child, after.minted[0]);
    assert.equal(events[0]!.exit, 0);
    assert.deepEqual(summary, { events: 1, minted: 0, ran: 1, recovered: 1, refused: {} });
    assert.equal(readFileSync(s.p("out/1/work/mark"), "utf8"), "ran\n");

    // Once only: fed a third time it is EventReplayed; the rate (2 a minute) counted it once, so one
    // more event mints and the next is RateExceeded.
    const b = { type: "push", source: "ci", id: "b", at_ms: s.now };
    const c = { type: "push", source: "ci", id: "c", at_ms: s.now };
    const third = await cli("sbx", [
      ...s.args,
      ...s.events([a, b, c]),
      "--out",
      s.p("out"),
      "--json",
      ...MARK,
    ]);
    assert.equal(third.code, 1, third.err);
    const t = parse(third.out);
    assert.deepEqual(
      t.events.map((e) => (e.status === "ran" ? `ran ${String(e.mint_seq)}` : e.code)),
      ["EventReplayed", "ran 2", "RateExceeded"],
    );
    assert.equal(readFileSync(s.p("out/1/work/mark"), "utf8"), "ran\n", "the recovered child ran once");
    const end = ledgers(s);
    assert.equal(end.minted.length, 2);
    assert.deepEqual(end.debited, end.minted, "one debit per child, each under its own child");
    assert.equal(end.runLog, 4, "a start and an end per child");
    const v = await cli("jcp", [
      ...["standing", "verify", "--policy", s.p("policy.json"), "--held", s.p("held.chain")],
      ...["--ledger", s.p("mints"), "--trust", s.p("root.key"), "--json"],
    ]);
    assert.equal(v.code, 0, v.err);
    assert.equal((JSON.parse(v.out) as { length: number }).length, 2);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("four `sbx on-event --pending` racing for one child left by a crash run it exactly once", async () => {
  const s = await setup("5/60000", "100J", "5J");
  try {
    await crashAt(s, "on-event:minted", { type: "push", source: "ci", id: "a", at_ms: s.now });
    const racers = await Promise.all(
      Array.from({ length: 4 }, () => sbx([...s.args, "--pending", "--out", s.p("out"), "--json", ...MARK])),
    );
    const lines = racers.flatMap((r) => parse(r.out).events);
    const ran = lines.filter((e) => e.status === "ran");
    assert.equal(ran.length, 1, JSON.stringify(lines));
    assert.equal(ran[0]!.recovered, true);
    assert.equal(ran[0]!.n, 0);
    // The others found it claimed: still running (RunInProgress), taken first (RunClaimed), or ended.
    for (const e of lines.filter((x) => x.status === "refused"))
      assert.ok(e.code === "RunInProgress" || e.code === "RunClaimed", e.code);
    for (const r of racers)
      assert.equal(r.code, parse(r.out).events.some((e) => e.status === "refused") ? 1 : 0, r.err);
    assert.equal(readFileSync(s.p("out/1/work/mark"), "utf8"), "ran\n");
    const end = ledgers(s);
    assert.deepEqual(end.debited, end.minted);
    assert.equal(end.runLog, 2);
    // Nothing is left pending now.
    const none = await cli("sbx", [...s.args, "--pending", "--json", ...MARK]);
    assert.equal(none.code, 0, none.err);
    assert.deepEqual(parse(none.out).summary, { events: 0, minted: 0, ran: 0, refused: {} });
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("SIGKILL after a run's start was claimed: RunInterrupted, never started again unless asked, then once", async () => {
  const s = await setup("5/60000", "100J", "5J");
  try {
    const a = { type: "push", source: "ci", id: "a", at_ms: s.now };
    await crashAt(s, "on-event:run-claimed", a);
    assert.equal(ledgers(s).runLog, 1, "its start is on the run log");
    const again = await cli("sbx", [...s.args, ...s.events([a]), "--json", ...MARK]);
    assert.equal(again.code, 1);
    assert.deepEqual(
      parse(again.out).events.map((e) => [e.status, e.code, e.mint_seq]),
      [["refused", "RunInterrupted", 1]],
    );
    const pending = await cli("sbx", [...s.args, "--pending", "--json", ...MARK]);
    assert.equal(pending.code, 1);
    assert.deepEqual(parse(pending.out).summary, {
      events: 0,
      minted: 0,
      ran: 0,
      refused: { RunInterrupted: 1 },
    });
    // Without --pending, a fresh invocation says on stderr what was left.
    const other = await cli("sbx", [...s.args, ...s.events([]), "--json", ...MARK]);
    assert.match(other.err, /1 minted child has no finished run \(mint 1 interrupted\)/);
    assert.equal(existsSync(s.p("out/1/work/mark")), false);
    assert.deepEqual(ledgers(s).debited, []);
    // Asked for, it is started again, once: two racing --pending --rerun-interrupted run it once.
    const rerun = ["--pending", "--rerun-interrupted", "--out", s.p("out"), "--json", ...MARK];
    const racers = await Promise.all([sbx([...s.args, ...rerun]), sbx([...s.args, ...rerun])]);
    const lines = racers.flatMap((r) => parse(r.out).events);
    const ran = lines.filter((e) => e.status === "ran");
    assert.equal(ran.length, 1, JSON.stringify(lines));
    assert.equal(ran[0]!.recovered, true);
    const dirs = readdirSync(s.p("out")).filter((d) => d.startsWith("1.rerun-"));
    assert.equal(dirs.length, 1);
    assert.equal(readFileSync(s.p(`out/${dirs[0]!}/work/mark`), "utf8"), "ran\n");
    const end = ledgers(s);
    assert.deepEqual(end.debited, end.minted, "debited once, under its child");
    assert.equal(end.runLog, 3, "start, restart, end");
    const after = await cli("sbx", [...s.args, ...rerun]);
    assert.equal(after.code, 0, after.err);
    assert.deepEqual(parse(after.out).summary, { events: 0, minted: 0, ran: 0, refused: {} });
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});
