// §15 pool files on this host: a lock left by a crashed operation is taken over, a live one is
// not, open failures carry their own codes, and an oversized ledger is refused before it is read.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { appendLines, readLedgerLines, withLock } from "../../src/pool/files.ts";

const root = mkdtempSync(join(tmpdir(), "sbx-pool-files-"));
after(() => rmSync(root, { recursive: true, force: true }));
const codeOf = (e: unknown) => (e as { code?: string }).code;

/** A pid that belonged to a process which has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(r.stdout.trim());
}

test("a lock left by a dead process is taken over, in the new and the old format", () => {
  for (const body of [`${String(deadPid())} 12345\n`, String(deadPid()), `${String(process.pid)} 1\n`]) {
    const lock = join(root, "lock");
    writeFileSync(lock, body);
    assert.equal(
      withLock(lock, () => readFileSync(lock, "utf8").split(" ")[0]),
      String(process.pid),
      `lock ${JSON.stringify(body)}: the takeover records its own pid`,
    );
    assert.ok(!existsSync(lock), "released after the operation");
  }
});

test("a lock held by a live process is PoolBusy, and is left in place", async () => {
  const holder = spawn("sleep", ["30"], { stdio: "ignore" });
  try {
    const lock = join(root, "live-lock");
    writeFileSync(lock, `${String(holder.pid)}\n`);
    assert.throws(
      () => withLock(lock, () => 1),
      (e) => codeOf(e) === "PoolBusy",
    );
    assert.equal(readFileSync(lock, "utf8"), `${String(holder.pid)}\n`);
    const fresh = join(root, "empty-lock");
    writeFileSync(fresh, ""); // a holder that has not written its pid yet (old format)
    assert.throws(
      () => withLock(fresh, () => 1),
      (e) => codeOf(e) === "PoolBusy",
    );
  } finally {
    holder.kill("SIGKILL");
    await new Promise((r) => holder.once("exit", r));
  }
});

test("a lock that cannot be taken for another reason has its own code, not PoolBusy", () => {
  assert.throws(
    () => withLock(join(root, "no-such-pool", "lock"), () => 1),
    (e) => codeOf(e) === "PoolMissing",
  );
});

test("eight processes racing for one stale lock never hold it together", () => {
  const lock = join(root, "race-lock");
  const marker = join(root, "race-held");
  writeFileSync(lock, `${String(deadPid())}\n`);
  const files = JSON.stringify(join(import.meta.dirname, "../../src/pool/files.ts"));
  const child = `
    import { openSync, closeSync, unlinkSync } from "node:fs";
    import { withLock } from ${files};
    let held = 0, busy = 0;
    for (let i = 0; i < 30; i++) {
      try {
        withLock(${JSON.stringify(lock)}, () => {
          closeSync(openSync(${JSON.stringify(marker)}, "wx")); // EEXIST: two holders at once
          const until = Date.now() + 2; while (Date.now() < until);
          unlinkSync(${JSON.stringify(marker)});
          held++;
        });
      } catch (e) {
        if (e.code !== "PoolBusy") throw e;
        busy++;
      }
    }
    console.log(held, busy);`;
  const script = join(root, "race.mts");
  writeFileSync(script, child);
  const cmd = Array.from({ length: 8 }, () => `node --import tsx ${script} &`).join(" ") + " wait";
  const r = spawnSync("sh", ["-c", cmd], { encoding: "utf8", cwd: process.cwd() });
  assert.equal(r.stderr, "", "no racer failed");
  const held = r.stdout
    .trim()
    .split("\n")
    .reduce((a, l) => a + Number(l.split(" ")[0]), 0);
  assert.ok(held > 0, "the stale lock was taken over");
});

test("a ledger over the limit is PoolTooLarge before it is read; the limit is named", () => {
  const ledger = join(root, "ledger.jsonl");
  writeFileSync(ledger, '{"a":1}\n'.repeat(1000));
  assert.equal(readLedgerLines(ledger).length, 1000);
  assert.throws(
    () => readLedgerLines(ledger, 4096),
    (e) => codeOf(e) === "PoolTooLarge" && String(e).includes("4096"),
  );
  assert.deepEqual(readLedgerLines(join(root, "absent.jsonl")), []);
});

test("appendLines into a pool that is gone has its own code", () => {
  assert.throws(
    () =>
      appendLines(join(root, "gone", "ledger.jsonl"), [{ payload: "", payloadType: "t", signatures: [] }]),
    (e) => codeOf(e) === "PoolUnusable",
  );
});
