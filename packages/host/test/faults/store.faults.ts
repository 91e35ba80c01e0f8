// The store under faults (§13.7): identical concurrent appends, a read-only store, a full disk,
// stray names in tmp/ and paths past the length limit. Mounts need root, as CI runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import { decodeRecord, type Segment } from "@sbx/sandbox-attest/runrecord";
import { FileStore, recordPaths, verifyRecordFiles } from "../../src/store/index.ts";
import { isHostError } from "../../src/errors.ts";

const d = (s: string): Digest => digestBytes(utf8(s));
const UNIT = d("unit");
const GRANTS = d("grants");
const exec = (n: string): Segment => ({ kind: "executed", attestation: d(n) });
const scratch = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

async function headOf(s: FileStore, id: Digest): Promise<Digest> {
  return decodeRecord((await s.readRecordBytes(id))!).record.head;
}

test(
  "1,000 pairs of byte-identical concurrent appends: exactly one caller is told it succeeded",
  { timeout: 300_000 },
  async () => {
    const s = FileStore.open(mkdtempSync(join(scratch, "sbx-race-")), { create: true });
    const script = join(import.meta.dirname, "race-child.ts");
    const racers = [0, 1].map(() =>
      spawn(process.execPath, ["--import", "tsx", script, s.root], { stdio: ["pipe", "pipe", "inherit"] }),
    );
    const lines = racers.map((r) => createInterface({ input: r.stdout })[Symbol.asyncIterator]());
    // Records are kept short (a fresh one every 25 rounds) so each round costs little.
    let id: Digest = d("none");
    let head = id;
    let conflicts = 0;
    try {
      for (let round = 0; round < 1000; round++) {
        if (round % 25 === 0) head = id = await s.createRecord(UNIT, d(`grants ${round}`));
        const at = Date.now() + 4;
        for (const r of racers) r.stdin.write(`${id} ${head} same-${round} ${at}\n`);
        const got = await Promise.all(lines.map(async (l) => String((await l.next()).value)));
        const won = got.filter((g) => g.startsWith("won "));
        assert.equal(won.length, 1, `round ${round}: ${got.join(" | ")}`);
        for (const g of got) if (!g.startsWith("won ")) assert.match(g, /^(AppendConflict|StaleHead)$/);
        if (got.includes("AppendConflict")) conflicts++;
        head = won[0]!.slice(4) as Digest;
        if (round % 25 === 24) assert.equal(await headOf(s, id), head, `round ${round}: the record's head`);
      }
    } finally {
      for (const r of racers) r.stdin.end();
    }
    console.log(`identical appends: 1000 pairs, ${conflicts} decided by the claim itself (AppendConflict)`);
  },
);

function mount(args: string[]): void {
  execFileSync("mount", args, { stdio: "pipe" });
}

test("verification and listing work on a read-only bind mount of the store", async () => {
  const base = mkdtempSync(join(tmpdir(), "sbx-ro-"));
  const s = FileStore.open(join(base, "rw"), { create: true });
  const id = await s.createRecord(UNIT, GRANTS);
  const h1 = await s.appendSegment(id, id, exec("a"));
  const clean = await s.createRecord(UNIT, d("other grants"));
  const c1 = await s.appendSegment(clean, clean, exec("c"));
  // a dead writer's temp file and an unclaimed torn tail: both are left for the next writer
  const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
  writeFileSync(join(s.root, "tmp", `${dead}-0123456789abcdef`), "stale");
  appendFileSync(recordPaths(s.root, id).file, '{"head":"blake3:00');
  const ro = join(base, "ro");
  mkdirSync(ro);
  mount(["--bind", s.root, ro]);
  try {
    mount(["-o", "remount,ro,bind", ro]);
    const r = FileStore.open(ro);
    assert.equal(await headOf(r, id), h1);
    assert.deepEqual(r.inspect(id), { rolledForward: 0, cutBytes: 18 });
    const readOnly = FileStore.open(ro, { readOnly: true });
    assert.equal(await headOf(readOnly, id), h1);
    assert.equal(verifyRecordFiles(r.recordPath(clean), r, { expectHead: c1 }).valid, true);
    // the file itself holds torn bytes: reported, not mended
    assert.equal(verifyRecordFiles(r.recordPath(id), r).error?.code, "TornRecord");
    await assert.rejects(r.appendSegment(id, h1, exec("b")), (e) => isHostError(e, "StoreWriteFailed"));
  } finally {
    execFileSync("umount", [ro]);
  }
  // the next writer settles
  assert.deepEqual(s.settle(id), { rolledForward: 0, cutBytes: 18 });
  assert.equal(verifyRecordFiles(s.recordPath(id), s, { expectHead: h1 }).valid, true);
});

test("appends on a full 1 MiB tmpfs never report failure for a committed segment and leave no temporaries", async () => {
  const mnt = mkdtempSync(join(tmpdir(), "sbx-full-"));
  mount(["-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt]);
  try {
    const s = FileStore.open(join(mnt, "store"), { create: true });
    const id = await s.createRecord(UNIT, GRANTS);
    let fillers = 0;
    for (;;) {
      try {
        writeFileSync(join(mnt, `fill-${fillers}`), new Uint8Array(4096));
        fillers++;
      } catch {
        break;
      }
    }
    let head = id;
    let ok = 0;
    let refused = 0;
    let deferred = 0;
    for (let cycle = 0; cycle < 250 && fillers > 0; cycle++) {
      rmSync(join(mnt, `fill-${--fillers}`)); // one page free
      for (let k = 0; k < 4; k++) {
        const before = head;
        try {
          head = await s.appendSegment(id, before, exec(`c${cycle}-${k}`));
          ok++;
          assert.equal(await headOf(s, id), head, `cycle ${cycle}: a reported append is in the record`);
          const inFile = decodeRecord(readFileSync(recordPaths(s.root, id).file), { allowTorn: true });
          if (inFile.record.head !== head) deferred++; // committed by its claim, line not yet in the file
        } catch (e) {
          assert.ok(isHostError(e, "StoreWriteFailed"), `cycle ${cycle}: ${String(e)}`);
          refused++;
          assert.equal(
            await headOf(s, id),
            before,
            `cycle ${cycle}: a committed segment was reported as failed`,
          );
        }
        assert.deepEqual(readdirSync(join(s.root, "tmp")), [], `cycle ${cycle}: temporary files left behind`);
      }
    }
    assert.ok(ok > 20 && refused > 20, `the disk really filled (${ok} appended, ${refused} refused)`);
    assert.ok(deferred > 0, "no append was committed by its claim while its line could not be written");
    console.log(`full disk: ${ok} appended (${deferred} completed later from the claim), ${refused} refused`);
  } finally {
    execFileSync("umount", [mnt]);
  }
});

test("stray names in tmp/ and over-long paths are coded refusals, not raw errors", async () => {
  const s = FileStore.open(mkdtempSync(join(tmpdir(), "sbx-stray-")), { create: true });
  const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
  mkdirSync(join(s.root, "tmp", `${dead}-x`));
  mkdirSync(join(s.root, "tmp", `${dead}-0123456789abcdef`));
  writeFileSync(join(s.root, "tmp", `${dead}-fedcba9876543210`), "stale");
  const again = FileStore.open(s.root);
  assert.deepEqual(readdirSync(join(s.root, "tmp")).sort(), [`${dead}-0123456789abcdef`, `${dead}-x`]);
  assert.ok(again.getObjectSync(await again.putObject(utf8("x"))) !== null);
  const long = join(s.root, "a".repeat(250), "b".repeat(250)).padEnd(5000, "/c");
  assert.throws(
    () => FileStore.open(long, { create: true }),
    (e) => isHostError(e, "StoreUnusable"),
  );
});
