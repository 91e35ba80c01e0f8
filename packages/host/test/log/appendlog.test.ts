// The append-only log (packages/host/src/log): compare-and-append on the head, StaleHead for a
// writer that read an older head, LogBroken for an entry that does not extend the head before it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { digestBytes } from "@sbx/wire";
import {
  appendLog,
  appendLogAt,
  LOG_GENESIS,
  LOG_START,
  readLog,
  readLogFrom,
  sweepLogTemps,
} from "../../src/log/index.ts";
import { spawnSync } from "node:child_process";
import { isHostError } from "../../src/errors.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

function withDir(f: (dir: string) => void): void {
  const d = mkdtempSync(join(tmpdir(), "log-"));
  try {
    f(join(d, "log"));
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

test("appends chain from the genesis head and read back in order", () => {
  withDir((dir) => {
    assert.deepEqual(readLog(dir), { entries: [], head: LOG_GENESIS });
    const h1 = appendLog(dir, LOG_GENESIS, enc("one"));
    const h2 = appendLog(dir, h1, enc("two"));
    const { entries, head } = readLog(dir);
    assert.equal(head, h2);
    assert.deepEqual(
      entries.map((e) => [e.seq, e.prev, dec(e.payload), e.head]),
      [
        [1, LOG_GENESIS, "one", h1],
        [2, h1, "two", h2],
      ],
    );
    assert.equal(h1, digestBytes(enc(`${LOG_GENESIS}\none`)));
    assert.deepEqual(readdirSync(join(dir, "tmp")), [], "no temp file is left");
  });
});

test("a writer that read an older head gets StaleHead and appends nothing", () => {
  withDir((dir) => {
    const h1 = appendLog(dir, LOG_GENESIS, enc("a"));
    assert.throws(
      () => appendLog(dir, LOG_GENESIS, enc("b")),
      (e) => isHostError(e, "StaleHead"),
    );
    assert.equal(readLog(dir).entries.length, 1);
    assert.equal(readLog(dir).head, h1);
  });
});

test("an entry that does not extend the head before it, or a gap, is LogBroken", () => {
  withDir((dir) => {
    const h1 = appendLog(dir, LOG_GENESIS, enc("a"));
    appendLog(dir, h1, enc("b"));
    writeFileSync(join(dir, "000000000002"), `${LOG_GENESIS}\nb`);
    assert.throws(
      () => readLog(dir),
      (e) => isHostError(e, "LogBroken"),
    );
    rmSync(join(dir, "000000000002"));
    writeFileSync(join(dir, "000000000003"), `${h1}\nc`);
    assert.throws(
      () => readLog(dir),
      (e) => isHostError(e, "LogBroken"),
    );
  });
});

test("readLogFrom reads only what follows a mark; appendLogAt claims the position after it", () => {
  withDir((dir) => {
    const m1 = appendLogAt(dir, LOG_START, enc("a"));
    const m2 = appendLogAt(dir, m1, enc("b"));
    assert.deepEqual(m2, { seq: 2, head: readLog(dir).head });
    const tail = readLogFrom(dir, m1);
    assert.deepEqual(
      tail.entries.map((e) => dec(e.payload)),
      ["b"],
    );
    assert.equal(tail.head, m2.head);
    assert.deepEqual(readLogFrom(dir, m2).entries, []);
    // A writer still at m1 lost position 2: StaleHead, and nothing was written.
    assert.throws(
      () => appendLogAt(dir, m1, enc("c")),
      (e) => isHostError(e, "StaleHead"),
    );
    // A mark that is not this log's is LogBroken, for a reader and for a writer.
    const other = { seq: 1, head: digestBytes(enc("x")) };
    assert.throws(
      () => readLogFrom(dir, other),
      (e) => isHostError(e, "LogBroken"),
    );
    assert.throws(
      () => appendLogAt(dir, other, enc("c")),
      (e) => isHostError(e, "LogBroken"),
    );
    // A gap after the mark is LogBroken.
    writeFileSync(join(dir, "000000000004"), `${m2.head}\nd`);
    assert.throws(
      () => readLogFrom(dir, m1),
      (e) => isHostError(e, "LogBroken"),
    );
  });
});

test("an append sweeps the temps of dead writers from tmp/, and keeps live ones' and other files", () => {
  withDir((dir) => {
    appendLogAt(dir, LOG_START, enc("a"));
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
    const deadTemp = join(dir, "tmp", `${String(dead)}-0123456789abcdef`);
    const liveTemp = join(dir, "tmp", `${String(process.pid)}-0123456789abcdef`);
    const other = join(dir, "tmp", "not-a-temp");
    for (const p of [deadTemp, liveTemp, other]) writeFileSync(p, "x");
    appendLog(dir, readLog(dir).head, enc("b"));
    assert.deepEqual(
      readdirSync(join(dir, "tmp")).sort(),
      [liveTemp, other].map((p) => p.slice(dir.length + 5)).sort(),
    );
    assert.equal(sweepLogTemps(dir), 0);
  });
});
