// §15.7 on the warm path (pool/held.ts): a claim verifies only the entries this process has not
// verified, and that shortcut never accepts what a replay from genesis would refuse: a changed byte
// anywhere in the verified prefix, a changed descriptor, a forged or broken tail.
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { addressOf, testKey } from "@sbx/wire";
import { appendEntry, replayLedger, summarize } from "@sbx/sandbox-attest/warmpool";
import {
  claimPoolItem,
  createPoolDir,
  destroyPoolDir,
  forgetHeldPools,
  lastHeldOpen,
  openPoolDir,
  poolPaths,
  residencyFigure,
} from "@sbx/host/pool";

const key = testKey("held-host");
const other = testKey("held-other");
const root = mkdtempSync(join(tmpdir(), "sbx-held-"));
after(() => rmSync(root, { recursive: true, force: true }));
const unit = addressOf({ unit: "held-test" });
const grants = addressOf({ grants: "held-test" });
const manifest = addressOf({ m: "held" });
let n = 0;

async function pool(size: number): Promise<string> {
  const dir = join(root, `p${String(n++)}`);
  await createPoolDir(dir, { name: "held", manifest, size, key, idleProcess: false });
  after(() => destroyPoolDir(dir, key).catch(() => undefined));
  return dir;
}

/** The state a replay from genesis gives, computed without the held path. */
function fromGenesis(dir: string) {
  const p = poolPaths(dir);
  const entries = readFileSync(p.ledger, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as unknown);
  return summarize(
    replayLedger({ pool: JSON.parse(readFileSync(p.descriptor, "utf8")) as unknown, entries }),
  );
}

function refusalCode(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return String((e as { code?: unknown }).code);
  }
  return "accepted";
}

test("a second claim verifies only the entries after the held prefix, and agrees with a full replay", async () => {
  const dir = await pool(3);
  forgetHeldPools();
  const first = openPoolDir(dir);
  assert.deepEqual(lastHeldOpen(), { verified: first.entries.length, fromGenesis: true });
  claimPoolItem(dir, { unit, grants, key });
  const before = lastHeldOpen();
  assert.equal(before.fromGenesis, false, "the claim started from the held state");
  assert.equal(before.verified, 0, "nothing new since the last open");
  const len = openPoolDir(dir).entries.length;
  const tail = lastHeldOpen();
  assert.equal(tail.fromGenesis, false);
  assert.ok(tail.verified >= 1 && tail.verified <= 2, "only the claim (and its accrual) were verified");
  claimPoolItem(dir, { unit, grants, key });
  const s = openPoolDir(dir);
  assert.ok(s.entries.length > len);
  assert.deepEqual(
    summarize(s),
    fromGenesis(dir),
    "the held path gives the state a replay from genesis gives",
  );
});

test("a byte changed in the verified prefix is refused: the held state is not used", async () => {
  const dir = await pool(2);
  const p = poolPaths(dir);
  openPoolDir(dir);
  const good = readFileSync(p.ledger);
  // Flip one character of the first entry's signature (same length, so the prefix length holds).
  const text = good.toString("utf8");
  const at = text.indexOf('"sig":"') + 10;
  const flipped = text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
  writeFileSync(p.ledger, flipped);
  assert.notEqual(
    refusalCode(() => openPoolDir(dir)),
    "accepted",
  );
  assert.equal(lastHeldOpen().fromGenesis, true, "a changed prefix is replayed from genesis");
  writeFileSync(p.ledger, good);
  assert.equal(
    refusalCode(() => openPoolDir(dir)),
    "accepted",
  );
});

test("a changed descriptor is replayed from genesis and refused", async () => {
  const dir = await pool(1);
  const p = poolPaths(dir);
  openPoolDir(dir);
  const good = readFileSync(p.descriptor, "utf8");
  const pool0 = JSON.parse(good) as { payload: string };
  writeFileSync(p.descriptor, JSON.stringify({ ...pool0, payload: pool0.payload.slice(0, -4) + "AAA=" }));
  assert.notEqual(
    refusalCode(() => openPoolDir(dir)),
    "accepted",
  );
  writeFileSync(p.descriptor, good);
  openPoolDir(dir);
});

test("a forged tail entry is refused with its code, and the held state stays usable", async () => {
  const dir = await pool(2);
  const p = poolPaths(dir);
  const s = openPoolDir(dir);
  const size = readFileSync(p.ledger).length;
  // A well-formed next entry (right seq and prev) signed by a key that is not the pool's host.
  const it = [...s.account.items.values()][0];
  assert.ok(it);
  const to = Math.max(s.account.last_ms, it.accounted_to_ms) + 1000;
  const residency = residencyFigure({ ms: to - it.accounted_to_ms, rss: 4096n, storage: 4096n, cpu_us: 0n });
  const body = { kind: "accrued", item: it.item, from_ms: it.accounted_to_ms, to_ms: to, residency } as const;
  const forged = appendEntry(s, body, other);
  appendFileSync(p.ledger, JSON.stringify(forged) + "\n");
  const code = refusalCode(() => openPoolDir(dir));
  assert.notEqual(code, "accepted");
  assert.equal(lastHeldOpen().fromGenesis, false, "the tail was checked on the held state");
  assert.equal(
    code,
    refusalCode(() => fromGenesis(dir)),
    "the same refusal as a replay from genesis",
  );
  truncateSync(p.ledger, size);
  assert.equal(
    refusalCode(() => openPoolDir(dir)),
    "accepted",
    "the held state was left as it was",
  );
  assert.equal(lastHeldOpen().verified, 0);
  // A shorter ledger than the held prefix is a full replay.
  truncateSync(p.ledger, 0);
  openPoolDir(dir);
  assert.equal(lastHeldOpen().fromGenesis, true);
});
