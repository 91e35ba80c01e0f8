// The checkpoint log on the append-only log (jcp §4.7): a writer that loses the head to another
// writer's entry reads, replays and signs again on the new state, so neither entry is lost (an
// amendment then answers the newer checkpoint); a running reader follows the log entry by entry
// and refuses a rewritten one; an older jcp's list file is read but never written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateKeyPair, payloadOf } from "@sbx/wire";
import { issueGrant } from "@sbx/jcp-grant/grant";
import { CheckpointLog } from "@sbx/jcp-grant/checkpoint";
import { appendLogJson } from "@sbx/host/ledger";
import { appendCheckpoint, CheckpointFollower, readCheckpointLog } from "@sbx/host/ledger";

const T0 = 1_800_000_000_000;
const ZERO = `blake3:${"0".repeat(64)}` as const;

function setup() {
  const root = generateKeyPair();
  const alice = generateKeyPair();
  const chain = [
    issueGrant(root, {
      holder: alice.did,
      resources: ["/fs/**"],
      actions: ["read"],
      uj: "10000000",
      depth: 1,
      nbf_ms: T0,
      exp_ms: T0 + 3_600_000,
    }),
  ];
  const dir = mkdtempSync(join(tmpdir(), "cp-log-"));
  return { root, alice, chain, dir, log: join(dir, "log") };
}

test("a checkpoint log writer that loses the head signs again on the new state; nothing is lost", () => {
  const s = setup();
  try {
    const spent = { uj: 1_000_000n, calls: 0, wall_ms: 0 };
    appendCheckpoint(s.log, s.chain, (l) => l.checkpoint(s.alice, { state: ZERO, spent, at_ms: T0 + 1 }));
    let calls = 0;
    // The issuer amends; while it signs, the holder appends a newer checkpoint first.
    const { log, retries } = appendCheckpoint(s.log, s.chain, (l) => {
      if (calls++ === 0) {
        const { entries, head } = readCheckpointLog(s.log);
        const other = CheckpointLog.replay(s.chain, entries);
        const cp = other.checkpoint(s.alice, {
          state: ZERO,
          spent: { ...spent, uj: 2_000_000n },
          at_ms: T0 + 2,
        });
        appendLogJson(s.log, head!, cp);
      }
      return l.amend(s.root, { uj: "5000000" }, T0 + 3);
    });
    assert.equal(retries, 1);
    assert.equal(calls, 2);
    assert.equal(log.length, 3);
    const { entries } = readCheckpointLog(s.log);
    assert.equal(entries.length, 3);
    // The amendment answers the newer checkpoint, the one the first attempt had not seen.
    const am = payloadOf(entries[2]!) as { responds_to: string };
    const replayed = CheckpointLog.replay(s.chain, entries);
    assert.equal(replayed.effective.budget.uj, 5_000_000n);
    assert.ok(am.responds_to.startsWith("blake3:"));
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("a follower reads only new entries, and refuses a log rewritten under it", () => {
  const s = setup();
  try {
    const spent = { uj: 0n, calls: 0, wall_ms: 0 };
    const f = new CheckpointFollower(s.log, s.chain);
    assert.equal(f.current().length, 0); // missing: the leaf as issued
    appendCheckpoint(s.log, s.chain, (l) => l.checkpoint(s.alice, { state: ZERO, spent, at_ms: T0 + 1 }));
    appendCheckpoint(s.log, s.chain, (l) => l.amend(s.root, { uj: "3000000" }, T0 + 2));
    assert.equal(f.current().effective.budget.uj, 3_000_000n);
    appendCheckpoint(s.log, s.chain, (l) => l.checkpoint(s.alice, { state: ZERO, spent, at_ms: T0 + 3 }));
    appendCheckpoint(s.log, s.chain, (l) => l.amend(s.root, { uj: "2000000" }, T0 + 4));
    assert.equal(f.current().effective.budget.uj, 2_000_000n);
    assert.equal(f.current().length, 4);
    // The log replaced by another history (the issuer amends to 4 J instead): refused, never
    // followed, and still refused on the next read.
    rmSync(s.log, { recursive: true });
    appendCheckpoint(s.log, s.chain, (l) => l.checkpoint(s.alice, { state: ZERO, spent, at_ms: T0 + 1 }));
    appendCheckpoint(s.log, s.chain, (l) => l.amend(s.root, { uj: "4000000" }, T0 + 2));
    const broken = (e: { code?: string }) => e.code === "BrokenCheckpointLog";
    assert.throws(() => f.current(), broken);
    assert.throws(() => f.current(), broken);
    // An entry rewritten in place under the follower is refused too.
    const g = new CheckpointFollower(s.log, s.chain);
    assert.equal(g.current().length, 2);
    writeFileSync(join(s.log, "000000000002"), "rewritten");
    assert.throws(() => g.current());
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("an older jcp's checkpoint list file is read, never written (BadLedger)", () => {
  const s = setup();
  try {
    const l = new CheckpointLog(s.chain);
    l.checkpoint(s.alice, { state: ZERO, spent: { uj: 0n, calls: 0, wall_ms: 0 }, at_ms: T0 + 1 });
    const file = join(s.dir, "log.json");
    writeFileSync(file, JSON.stringify(l.entries));
    assert.equal(readCheckpointLog(file).entries.length, 1);
    assert.equal(new CheckpointFollower(file, s.chain).current().length, 1);
    assert.throws(
      () => appendCheckpoint(file, s.chain, (x) => x.amend(s.root, { uj: "1" }, T0 + 2)),
      (e: { code?: string }) => e.code === "BadLedger",
    );
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});
