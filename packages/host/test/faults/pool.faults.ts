// §15 the pool ledger on a full disk: an append that cannot be written whole is cut back and
// reported (PoolWriteFailed), so no torn line stays and every reported append is readable. Mounts
// need root, as CI runs (`npm run test:faults`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendLines, readLedgerLines } from "../../src/pool/files.ts";

test("appends on a full 64 KiB tmpfs leave no torn line; each reported append is whole", () => {
  const mnt = mkdtempSync(join(tmpdir(), "sbx-pool-full-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt]);
  try {
    mkdirSync(join(mnt, "pool"));
    const ledger = join(mnt, "pool", "ledger.jsonl");
    let ok = 0;
    let failed = 0;
    for (let i = 0; i < 200 && failed < 5; i++) {
      const env = { payload: "p".repeat(1000 + i), payloadType: "t", signatures: [] };
      try {
        appendLines(ledger, [env, env]);
        ok += 2;
      } catch (e) {
        assert.equal((e as { code?: string }).code, "PoolWriteFailed", String(e));
        failed++;
      }
      const text = readFileSync(ledger, "utf8");
      assert.ok(text === "" || text.endsWith("\n"), `append ${String(i)} left a torn line`);
    }
    assert.ok(failed > 0, "the disk filled");
    assert.equal(readLedgerLines(ledger).length, ok, "exactly the reported appends are there");
  } finally {
    execFileSync("umount", [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
});
