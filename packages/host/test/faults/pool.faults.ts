// §15 the pool ledger on a full disk: an append whose log entry cannot be written is refused
// (PoolWriteFailed) with nothing of it in the ledger, so every reported operation is there and the
// ledger always verifies. Mounts need root, as CI runs (`npm run test:faults`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { verifyLedger } from "@sbx/sandbox-attest/warmpool";
import { createPoolDir, forgetHeldPools, openPoolDir } from "../../src/pool/index.ts";

test("provisioning on a full 64 KiB tmpfs: each reported item is in the ledger, a refused one is not", async () => {
  const mnt = mkdtempSync(join(tmpdir(), "sbx-pool-full-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt]);
  try {
    const key = testKey("pool-full");
    const dir = join(mnt, "pool");
    let code = "accepted";
    try {
      await createPoolDir(dir, {
        name: "full",
        manifest: addressOf({ m: "full" }),
        size: 1000,
        key,
        idleProcess: false,
      });
    } catch (e) {
      code = String((e as { code?: unknown }).code);
    }
    assert.notEqual(code, "accepted", "the disk filled");
    // The ledger's append refused (PoolWriteFailed), or the item's own folder before it (ENOSPC).
    assert.ok(["PoolWriteFailed", "ENOSPC"].includes(code), code);
    forgetHeldPools();
    const s = openPoolDir(dir);
    verifyLedger(s, { hosts: [key.did] });
    assert.ok(s.account.items.size > 0, "items before the disk filled are there");
  } finally {
    execFileSync("umount", [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
});
