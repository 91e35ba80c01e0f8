// §13.9 Verification from files: a valid run is VALID with its energy split; flipping any single
// byte of the record file or of any object it references makes verification fail with a code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRecordFiles } from "../../src/store/index.ts";
import { fixtureRun } from "./fixture-run.ts";

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

test("a real run verifies from files, with active and idle energy reported", async () => {
  const run = await fixtureRun();
  const r = verifyRecordFiles(run.recordPath, run.store);
  assert.equal(r.valid, true, JSON.stringify(r.error));
  assert.deepEqual(r.phases, { executed: 2, suspended: 1, resumed: 1, closed: 1, moved: 0 });
  assert.deepEqual(
    [r.energy?.active_uj, r.energy?.idle_uj, r.energy?.total_uj, r.energy?.complete],
    ["4000000", "420000", "4420000", true],
  );
  assert.deepEqual(r.checked, { attestations: 2, receipts: 2, trees: 1, objects: 1, journals: 0, events: 0 });
  assert.deepEqual(r.missing, []);
});

test("flipping any single byte of the record or of any referenced object is refused with a code", async () => {
  const run = await fixtureRun();
  const targets = [
    run.recordPath,
    ...files(join(run.store.root, "objects")),
    ...files(join(run.store.root, "signed")),
  ];
  const codes = new Map<string, number>();
  let flips = 0;
  for (const path of targets) {
    chmodSync(path, 0o644);
    const orig = readFileSync(path);
    for (let i = 0; i < orig.length; i++) {
      const b = Buffer.from(orig);
      b[i]! ^= 0x01;
      writeFileSync(path, b);
      const r = verifyRecordFiles(run.recordPath, run.store);
      assert.equal(r.valid, false, `${path} byte ${i} flipped was accepted`);
      codes.set(r.error!.code, (codes.get(r.error!.code) ?? 0) + 1);
      flips++;
    }
    writeFileSync(path, orig);
  }
  assert.equal(verifyRecordFiles(run.recordPath, run.store).valid, true, "restored files verify again");
  console.log(
    `# ${flips} single-byte flips over ${targets.length} files, codes: ${[...codes].map(([c, n]) => `${c}×${n}`).join(" ")}`,
  );
});

test("a record cut back at a segment boundary is caught by --head", async () => {
  const run = await fixtureRun();
  const full = verifyRecordFiles(run.recordPath, run.store);
  const bytes = readFileSync(run.recordPath);
  const cut = bytes.subarray(0, bytes.lastIndexOf(0x0a, bytes.length - 2) + 1);
  writeFileSync(run.recordPath, cut);
  assert.equal(
    verifyRecordFiles(run.recordPath, run.store).valid,
    true,
    "a shorter record is self-consistent",
  );
  const r = verifyRecordFiles(run.recordPath, run.store, { expectHead: full.head! });
  assert.equal(r.error?.code, "HeadMismatch");
});
