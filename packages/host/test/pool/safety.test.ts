// §15 on this host: the pool touches item folders a unit controls without following a link it
// planted or swapped in, recovers a lock left by a dead operation, and keeps its ledger whole.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { diskBytes, removeTree } from "../../src/pool/idle.ts";

const root = mkdtempSync(join(tmpdir(), "sbx-pool-safety-"));
after(() => rmSync(root, { recursive: true, force: true }));

// A process in the workspace that keeps swapping directory `sub` for a link to `target` and back.
const SWAPPER = `
const fs = require("node:fs");
const [ws, target] = process.argv.slice(1);
process.stdout.write("ready\\n");
for (;;) {
  try { fs.renameSync(ws + "/sub", ws + "/held"); } catch {}
  try { fs.symlinkSync(target, ws + "/sub"); } catch {}
  try { fs.unlinkSync(ws + "/sub"); } catch {}
  try { fs.renameSync(ws + "/held", ws + "/sub"); } catch {}
}`;

async function startSwapper(ws: string, target: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", SWAPPER, ws, target], { stdio: ["ignore", "pipe", "ignore"] });
  await new Promise((r) => child.stdout.once("data", r));
  return child;
}

function fillTree(ws: string): void {
  mkdirSync(join(ws, "sub", "deeper"), { recursive: true });
  for (let i = 0; i < 40; i++) {
    writeFileSync(join(ws, "sub", `f${String(i)}`), "x");
    writeFileSync(join(ws, "sub", "deeper", `g${String(i)}`), "y");
  }
}

test("removeTree never deletes through a directory swapped for a link mid-removal", async () => {
  const outside = join(root, "outside");
  mkdirSync(outside);
  const secrets = Array.from({ length: 40 }, (_, i) => `f${String(i)}`);
  const refill = () => {
    for (const n of secrets) writeFileSync(join(outside, n), "host secret");
    mkdirSync(join(outside, "deeper"), { recursive: true });
    for (let i = 0; i < 40; i++) writeFileSync(join(outside, "deeper", `g${String(i)}`), "s");
  };
  refill();
  const item = join(root, "item");
  const ws = join(item, "workspace");
  mkdirSync(ws, { recursive: true });
  const swapper = await startSwapper(ws, outside);
  try {
    for (let round = 0; round < 300; round++) {
      mkdirSync(ws, { recursive: true });
      try {
        fillTree(ws); // races the swapper too: a file it cannot place is simply not there
      } catch {
        /* the swapper moved `sub` away meanwhile */
      }
      try {
        removeTree(item);
      } catch (e) {
        assert.equal((e as { code?: string }).code, "WorkspaceChanged", String(e));
      }
      assert.deepEqual(
        readdirSync(outside).sort(),
        [...secrets, "deeper"].sort(),
        `round ${String(round)}: a file outside the item was deleted`,
      );
      assert.equal(readdirSync(join(outside, "deeper")).length, 40, `round ${String(round)}`);
    }
  } finally {
    swapper.kill("SIGKILL");
    await new Promise((r) => swapper.once("exit", r));
  }
});

test("removeTree removes a plain tree and unlinks a planted link without entering it", () => {
  const outside = join(root, "outside2");
  mkdirSync(outside);
  writeFileSync(join(outside, "keep"), "k");
  const item = join(root, "plain");
  fillTree(join(item, "workspace"));
  symlinkSync(outside, join(item, "workspace", "link"));
  removeTree(item);
  assert.ok(!existsSync(item));
  assert.ok(existsSync(join(outside, "keep")));
  removeTree(item); // already gone: nothing to do
});

test("diskBytes counts a link as a link, never what it points at", () => {
  const big = join(root, "big");
  mkdirSync(big);
  writeFileSync(join(big, "blob"), Buffer.alloc(4 << 20, 1));
  const item = join(root, "measured");
  mkdirSync(join(item, "workspace"), { recursive: true });
  const alone = diskBytes(item);
  symlinkSync(big, join(item, "workspace", "sub"));
  const withLink = diskBytes(item);
  assert.ok(withLink - alone < 1n << 20n, `a link counted ${String(withLink - alone)} bytes`);
  assert.ok(diskBytes(big) >= 4n << 20n, "a real tree is counted");
  assert.equal(diskBytes(join(root, "absent")), 0n);
});
