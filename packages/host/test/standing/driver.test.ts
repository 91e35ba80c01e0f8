// The standing driver in process (jcp §4.6 "Runs driven by events", host/src/standing/): what
// `sbx on-event` does, without the binary or its flags. Real sandboxed runs under minted children
// debited on a real spend ledger; the crash cases as the run log leaves them (a child minted and
// never claimed; a claim whose holder is dead), fed again and run exactly once; an abort that starts
// no further run; every refusal by its code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  addressOf,
  canonicalBytes,
  generateKeyPair,
  payloadOf,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { issueGrant, randomNonce } from "@sbx/jcp-grant/grant";
import { createPolicy, eventAddress } from "@sbx/jcp-grant/standing";
import { mintOn, readLedger, readMintLog, spendOn } from "../../src/ledger/index.ts";
import { appendLog, readLog } from "../../src/log/index.ts";
import {
  childRunner,
  claimRun,
  mintedRuns,
  runLogOf,
  StandingDriver,
  type ChildRun,
  type EventResult,
  type StandingDriverOptions,
} from "../../src/standing/index.ts";

const HOUR = 3_600_000;
const [root, alice, bob, host] = [0, 1, 2, 3].map(() => generateKeyPair()) as [
  KeyPair,
  KeyPair,
  KeyPair,
  KeyPair,
];

/** A held grant for /fs/work/** to alice, a mint policy over it (children to bob), and folders. */
function setup(rate: { count: number; window_ms: number }, heldUj: string, childUj: string) {
  const dir = mkdtempSync(join(tmpdir(), "sbx-standing-"));
  const now = Date.now();
  const held = issueGrant(root, {
    holder: alice.did,
    resources: ["/fs/work/**"],
    actions: ["read", "write"],
    uj: heldUj,
    calls: 1000,
    nbf_ms: now - HOUR,
    exp_ms: now + HOUR,
    depth: 2,
    nonce: randomNonce(),
  });
  const policy = createPolicy(root, {
    grant: addressOf(payloadOf(held)), // the held grant, by its payload's address (jcp §4.6)
    issuer: root.did,
    minter: alice.did,
    triggers: [{ type: "push", source: "ci" }],
    template: {
      holder: bob.did,
      resources: ["/fs/work/**"],
      actions: ["read", "write"],
      uj: childUj,
      calls: 10,
      lifetime_ms: 600_000,
      depth: 0,
    },
    max_children: 20,
    max_total_uj: "1000000000",
    rate,
    nbf_ms: now - 60_000,
    exp_ms: now + HOUR,
  });
  const standing = { held: [held], policy };
  const base = {
    mints: join(dir, "mints"),
    standing,
    minter: alice,
    roots: [root.did],
    dir: join(dir, "runs"),
  };
  return { dir, now, base, ledger: join(dir, "ledger") };
}

const ev = (id: string, at_ms: number) => JSON.stringify({ type: "push", source: "ci", id, at_ms });

/** A driver whose runs are recorded, not executed: the loop's own logic, fast. */
function recording(o: Omit<StandingDriverOptions, "run">, exit = 0) {
  const ran: ChildRun[] = [];
  const results: EventResult[] = [];
  const driver = new StandingDriver({
    ...o,
    report: (r) => results.push(r),
    run: (c) => {
      ran.push(c);
      return Promise.resolve({ run: { seq: c.seq }, exit });
    },
  });
  return { driver, ran, results };
}

test("rate 3/min, 10 events: 3 sandboxed runs under their own children, each debited, 7 RateExceeded", async () => {
  const s = setup({ count: 3, window_ms: 60_000 }, "100000000", "5000000");
  try {
    const out: Buffer[] = [];
    const driver = new StandingDriver({
      ...s.base,
      run: childRunner({
        hostKey: host,
        roots: [root.did],
        ledger: s.ledger,
        argv: ["sh", "-c", "echo ran > /work/mark; echo hi"],
        keepRecord: true,
        onOutput: (_stream, data) => out.push(data),
      }),
    });
    for (let i = 0; i < 10; i++) driver.feed(ev(`e${String(i)}`, s.now));
    await driver.drain();
    assert.deepEqual(driver.summary(), { events: 10, minted: 3, ran: 3, refused: { RateExceeded: 7 } });
    assert.equal(driver.ok(), false);
    const ran = driver.results.filter((r) => r.status === "ran").sort((a, b) => a.n - b.n);
    assert.deepEqual(
      ran.map((r) => [r.n, r.mint_seq, r.exit]),
      [
        [1, 1, 0],
        [2, 2, 0],
        [3, 3, 0],
      ],
    );
    for (const r of ran) {
      const run = r.run as {
        outcome: { status: string };
        energy: { total_uj: string };
        grant: { spent_uj: string };
      };
      assert.equal(run.outcome.status, "exited", `event ${String(r.n)}`);
      assert.equal(run.grant.spent_uj, run.energy.total_uj, `event ${String(r.n)}`);
      const d = join(s.base.dir, String(r.mint_seq));
      assert.equal(readFileSync(join(d, "work/mark"), "utf8"), "ran\n");
      const chain = JSON.parse(readFileSync(join(d, "grant.chain"), "utf8")) as Envelope[];
      assert.equal((payloadOf(chain.at(-1)!) as { mint?: { event: string } }).mint?.event, r.event);
      assert.ok(existsSync(join(d, "run/attestation.json")), "the record is kept with keepRecord");
    }
    assert.equal(Buffer.concat(out).toString(), "hi\nhi\nhi\n");
    const debits = readLedger(s.ledger).receipts.map((x) => payloadOf(x) as { grant: string; uj: string });
    assert.deepEqual(
      debits.map((d) => [d.grant, d.uj]),
      ran.map((r) => [r.child, (r.run as { energy: { total_uj: string } }).energy.total_uj]),
    );
    for (const r of driver.results.filter((x) => x.status === "refused")) {
      assert.equal(r.code, "RateExceeded");
      assert.equal(r.child, undefined);
    }
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("a run whose held grant has nothing left is refused BudgetExhausted at its start, its end written", async () => {
  const s = setup({ count: 100, window_ms: 60_000 }, "1000000", "1000000");
  try {
    spendOn(
      s.ledger,
      s.base.standing.held,
      host,
      { uj: "1000000", wall_ms: 1, calls: 1 },
      { roots: [root.did], hosts: [host.did] },
      Date.now,
    );
    const driver = new StandingDriver({
      ...s.base,
      run: childRunner({ hostKey: host, roots: [root.did], ledger: s.ledger, argv: ["true"] }),
    });
    driver.feed(ev("b", s.now));
    await driver.drain();
    const [r] = driver.results;
    assert.equal(r?.status, "refused");
    assert.equal(r.code, "BudgetExhausted");
    assert.notEqual(r.child, undefined, "it was minted: the mint ledger is the record");
    assert.deepEqual(
      mintedRuns(s.base.mints, s.base.standing, alice, { roots: [root.did] }).map((m) => [m.state, m.end]),
      [["ended", { status: "refused", code: "BudgetExhausted" }]],
    );
    assert.equal(readLedger(s.ledger).receipts.length, 1);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("replayed, untriggered, malformed and oversize events start nothing, each by its code", async () => {
  const s = setup({ count: 100, window_ms: 60_000 }, "100000000", "5000000");
  try {
    const { driver, ran } = recording(s.base);
    const ok = ev("a", s.now);
    driver.feed(ok);
    driver.feed(ok);
    driver.feed(JSON.stringify({ type: "tag", source: "ci", at_ms: s.now }));
    driver.feed("{not json");
    driver.feed(JSON.stringify({ type: "push", source: "ci", id: "x".repeat(70_000), at_ms: s.now }));
    await driver.drain();
    const codes = [...driver.results]
      .sort((a, b) => a.n - b.n)
      .map((r) => (r.status === "ran" ? "ran" : r.code));
    assert.deepEqual(codes, ["ran", "EventReplayed", "TriggerMismatch", "BadEvent", "BadEvent"]);
    assert.equal(ran.length, 1);
    assert.deepEqual(driver.summary(), {
      events: 5,
      minted: 1,
      ran: 1,
      refused: { EventReplayed: 1, TriggerMismatch: 1, BadEvent: 2 },
    });
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("a child minted by a driver that died before its run: its event fed again runs it once, recovered", async () => {
  const s = setup({ count: 2, window_ms: 60_000 }, "100000000", "5000000");
  try {
    // What a crash between the mint and the claim leaves: the child on the mint ledger, no start.
    const a = JSON.parse(ev("a", s.now)) as unknown;
    mintOn(s.base.mints, s.base.standing, alice, a, Date.now, { roots: [root.did] });
    const first = recording(s.base);
    assert.deepEqual(
      first.driver.leftOver().map((m) => [m.seq, m.state]),
      [[1, "unclaimed"]],
    );
    first.driver.feed(JSON.stringify(a));
    first.driver.feed(JSON.stringify(a)); // its own queued child: simply replayed
    await first.driver.drain();
    assert.deepEqual(
      first.results.map((r) => [r.status, r.code, r.recovered, r.mint_seq]),
      [
        ["refused", "EventReplayed", undefined, undefined],
        ["ran", undefined, true, 1],
      ],
    );
    assert.deepEqual(first.driver.summary(), {
      events: 2,
      minted: 0,
      ran: 1,
      recovered: 1,
      refused: { EventReplayed: 1 },
    });
    // Once only: fed again it is EventReplayed; the rate counted it once, so one more mints.
    const second = recording(s.base);
    second.driver.feed(JSON.stringify(a));
    second.driver.feed(ev("b", s.now));
    second.driver.feed(ev("c", s.now));
    await second.driver.drain();
    assert.deepEqual(
      [...second.results]
        .sort((x, y) => x.n - y.n)
        .map((r) => (r.status === "ran" ? `ran ${String(r.mint_seq)}` : r.code)),
      ["EventReplayed", "ran 2", "RateExceeded"],
    );
    assert.equal(first.ran.length + second.ran.length, 2);
    assert.equal(readLog(runLogOf(s.base.mints)).entries.length, 4, "a start and an end per child");
    assert.equal(second.driver.leftOver().length, 0);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("four drivers' pending() racing for one unclaimed child run it exactly once", async () => {
  const s = setup({ count: 5, window_ms: 60_000 }, "100000000", "5000000");
  try {
    mintOn(s.base.mints, s.base.standing, alice, JSON.parse(ev("a", s.now)), Date.now, { roots: [root.did] });
    const racers = Array.from({ length: 4 }, () => recording(s.base));
    for (const r of racers) r.driver.pending();
    await Promise.all(racers.map((r) => r.driver.drain()));
    const lines = racers.flatMap((r) => r.results);
    assert.equal(racers.flatMap((r) => r.ran).length, 1);
    assert.equal(lines.filter((l) => l.status === "ran").length, 1);
    // (One process here: the others see the claim as another driver's, taken first.)
    for (const l of lines.filter((x) => x.status === "refused")) assert.equal(l.code, "RunClaimed");
    assert.equal(readLog(runLogOf(s.base.mints)).entries.length, 2);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("a claim whose holder died: RunInterrupted, never rerun unless asked, then once", async () => {
  const s = setup({ count: 5, window_ms: 60_000 }, "100000000", "5000000");
  try {
    const a = JSON.parse(ev("a", s.now)) as unknown;
    const m = mintOn(s.base.mints, s.base.standing, alice, a, Date.now, { roots: [root.did] });
    // A holder that is not alive: no process has that start time.
    const dead = { pid: process.pid, start: "1" };
    assert.equal(
      claimRun(s.base.mints, { seq: 1, child: m.childAddress, event: eventAddress(a) }, dead),
      null,
    );
    const fed = recording(s.base);
    fed.driver.feed(JSON.stringify(a));
    fed.driver.pending();
    await fed.driver.drain();
    assert.deepEqual(
      fed.results.map((r) => [r.n, r.code]),
      [
        [1, "RunInterrupted"],
        [0, "RunInterrupted"],
      ],
    );
    assert.equal(fed.ran.length, 0);
    const racers = [0, 1].map(() => recording({ ...s.base, rerunInterrupted: true }));
    for (const r of racers) r.driver.pending();
    await Promise.all(racers.map((r) => r.driver.drain()));
    const ran = racers.flatMap((r) => r.ran);
    assert.equal(ran.length, 1);
    assert.match(ran[0]!.dir, /\/1\.rerun-\d+$/);
    assert.equal(readLog(runLogOf(s.base.mints)).entries.length, 3, "start, restart, end");
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("aborted: queued runs are refused Interrupted and stay pending; a run's throw is its refusal", async () => {
  const s = setup({ count: 5, window_ms: 60_000 }, "100000000", "5000000");
  try {
    const abort = new AbortController();
    abort.abort();
    const stopped = recording({ ...s.base, abort: abort.signal });
    stopped.driver.feed(ev("a", s.now));
    await stopped.driver.drain();
    assert.deepEqual(
      stopped.results.map((r) => [r.status, r.code]),
      [["refused", "Interrupted"]],
    );
    assert.deepEqual(
      stopped.driver.leftOver().map((m) => m.state),
      ["unclaimed"],
    );
    const failing = new StandingDriver({
      ...s.base,
      run: () => Promise.reject(Object.assign(new Error("no such file"), { code: "ENOENT" })),
    });
    failing.pending();
    await failing.drain();
    assert.deepEqual(
      failing.results.map((r) => [r.n, r.status, r.code, r.recovered]),
      [[0, "refused", "ENOENT", true]],
    );
    assert.deepEqual(
      mintedRuns(s.base.mints, s.base.standing, alice, { roots: [root.did] }).map((m) => m.end),
      [{ status: "refused", code: "ENOENT" }],
    );
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("a run log entry naming a child the mint ledger does not hold is BadLedger, a HostError", () => {
  const s = setup({ count: 5, window_ms: 60_000 }, "100000000", "5000000");
  try {
    mintOn(s.base.mints, s.base.standing, alice, JSON.parse(ev("a", s.now)), Date.now, { roots: [root.did] });
    const head = readLog(runLogOf(s.base.mints)).head;
    const child = (payloadOf(readMintLog(s.base.mints).entries[0]!) as { child: string }).child;
    const bogus = { run: "ended", seq: 7, child, status: "ran" };
    appendLog(runLogOf(s.base.mints), head, canonicalBytes(bogus));
    const d = recording(s.base).driver;
    assert.throws(
      () => d.pending(),
      (e: unknown) =>
        (e as { name?: string; code?: string }).name === "HostError" &&
        (e as { code?: string }).code === "BadLedger",
    );
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("ok(): every event fed has a run that exited 0; a run exiting non-zero is not ok", async () => {
  const s = setup({ count: 5, window_ms: 60_000 }, "100000000", "5000000");
  try {
    const good = recording(s.base, 0);
    good.driver.feed(ev("a", s.now));
    await good.driver.drain();
    assert.equal(good.driver.ok(), true);
    const bad = recording(s.base, 1);
    bad.driver.feed(ev("b", s.now));
    await bad.driver.drain();
    assert.deepEqual(
      bad.results.map((r) => [r.status, r.exit]),
      [["ran", 1]],
    );
    assert.equal(bad.driver.ok(), false);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});
