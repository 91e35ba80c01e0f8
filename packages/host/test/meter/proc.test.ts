// §6.3 /proc readers: the stat parser, and a real child process's CPU time and resident set.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  parseProcStat,
  procCpuUs,
  procRssBytes,
  readMachineCpuUs,
  readProcStat,
  systemConstants,
} from "@sbx/host/meter";
import { busyChild, exitOf, hasCode, sleep } from "./fakes.ts";

test("parses a stat line whose command name holds spaces and parentheses", () => {
  const rest = "S 1 2 3 4 5 6 7 8 9 10 250 50 7 3 20 0 1 0 100 12345678 321 18446744073709551615";
  const s = parseProcStat(`42 (a b) (c)) ${rest}`);
  assert.equal(s.pid, 42);
  assert.equal(s.comm, "a b) (c)");
  assert.deepEqual(
    [s.state, s.utime, s.stime, s.cutime, s.cstime, s.rss_pages],
    ["S", 250n, 50n, 7n, 3n, 321n],
  );
  assert.equal(procCpuUs(s, 100), 3_100_000n);
  assert.throws(() => parseProcStat("42 no-parens S"), hasCode("BadProcStat"));
  assert.throws(() => parseProcStat("42 (x) S 1 2"), hasCode("BadProcStat"));
});

test("a real busy child: CPU time grows, resident set is non-zero, and it is gone after exit", async () => {
  const { hz, page } = systemConstants();
  assert.ok(hz > 0 && page > 0);
  const child = busyChild(3_000);
  const pid = child.pid ?? -1;
  const first = procCpuUs(readProcStat(pid));
  // The machine is shared: wait (up to 5 s) until the child has been scheduled for a few ticks.
  for (let i = 0; i < 100 && procCpuUs(readProcStat(pid)) - first < 50_000n; i++) await sleep(50);
  const later = readProcStat(pid);
  assert.ok(procCpuUs(later) > first, `cpu ${procCpuUs(later)} after ${first}`);
  assert.ok(procRssBytes(later) > 1024n * 1024n, "node's resident set is over 1 MiB");
  child.kill("SIGKILL");
  await exitOf(child);
  assert.throws(() => readProcStat(pid), hasCode("ProcessGone"));
});

test("the machine's busy CPU time only grows", async () => {
  const a = readMachineCpuUs();
  const child = busyChild(200);
  await exitOf(child);
  assert.ok(readMachineCpuUs() > a);
});
