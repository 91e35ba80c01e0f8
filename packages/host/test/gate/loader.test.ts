// §5.5.5 a loader run as a program is tracked as one process: every file it maps is journaled
// (those the kernel no longer asks about from their notices), and nobody else's masks, decisions or
// waits change, neither while it runs nor after it ends. /usr is read-only, so its libraries carry
// ignore masks, as in the sandbox of §5.1.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import type { GateResult } from "@sbx/host/gate";
import { LOADER, withFixture, refusals, runSh, type Fixture } from "./fixture.ts";

let f: Fixture;
let policy: ExecPolicy;

withFixture((x) => {
  f = x;
  policy = makePolicy("denylist", [], [f.deniedDigest]);
});

const RO = { readOnly: ["/usr"] };
const WARM = "for i in 1 2 3 4 5; do /usr/bin/true; done";
const LOOP = "i=0; while [ $i -lt 40 ]; do /usr/bin/true; i=$((i+1)); done";

function asked(r: GateResult): number {
  assert.equal(r.code, 0, r.stderr);
  return r.stats?.permissionEvents ?? Number.NaN;
}

describe("a loader run as a program", () => {
  test("every file it maps is journaled, masked libraries included", { timeout: 30_000 }, async () => {
    const r = await runSh(
      f,
      policy,
      `rm -f m; ${WARM}; ${LOADER} /usr/bin/true; ${LOADER} ./denied m; exit 0`,
      RO,
    );
    const runs = r.decisions.filter((d) => d.route === "direct" && d.path.includes("ld-linux"));
    assert.equal(runs.length, 2, JSON.stringify(r.decisions));
    const pid = runs[0]?.pid;
    const mapped = r.decisions.filter((d) => d.pid === pid && d.route === "loader");
    assert.ok(
      mapped.some((d) => d.path.includes("libc.so") && d.allowed),
      `libc, masked after the warm execs, is journaled: ${JSON.stringify(mapped)}`,
    );
    assert.ok(
      r.decisions.some((d) => d.route === "loader" && d.path.endsWith("/usr/bin/true") && d.allowed),
      "the program it maps is journaled",
    );
    assert.ok(refusals(r, f.deniedDigest).some((d) => d.route === "loader" && d.rule === "denied"));
    assert.ok(!r.stdout.includes("DENIED-RAN"));
  });

  test(
    "a loader the kernel asks about on each open, run as a program: the program it maps is journaled",
    { timeout: 30_000 },
    async () => {
      // A copy of the loader in the writable workspace carries no ignore mask, so the exec open
      // that runs it raises its second permission event (FAN_OPEN_PERM) before the exec completes,
      // while the process still runs the shell: it must still count as running the loader.
      const r = await runSh(
        f,
        policy,
        `cp ${LOADER} ./ld-copy; ${WARM}; ./ld-copy /usr/bin/true; exit 0`,
        RO,
      );
      assert.equal(r.code, 0, r.stderr);
      const run = r.decisions.find((d) => d.route === "direct" && d.path.endsWith("/ld-copy"));
      assert.ok(run?.allowed, JSON.stringify(r.decisions));
      const mapped = r.decisions.filter((d) => d.pid === run.pid && d.route === "loader");
      assert.ok(
        mapped.some((d) => d.path === "/usr/bin/true" && d.allowed),
        `the program it maps, masked after the warm execs, is journaled: ${JSON.stringify(mapped)}`,
      );
    },
  );

  test(
    "after it ends, others' warm execs wait on no more permission events",
    { timeout: 60_000 },
    async () => {
      const base = asked(await runSh(f, policy, `${WARM}; ${LOOP}`, RO));
      const after = asked(await runSh(f, policy, `${WARM}; ${LOADER} /usr/bin/true; ${LOOP}`, RO));
      // The loader's own run raises a few (its exec, the program and libraries it maps); a sandbox
      // switched into a slow mode would ask about every library of each of the 40 execs.
      assert.ok(after - base <= 12, `permission events: ${base} without the loader, ${after} with it`);
    },
  );

  test("while it runs, others' execs are unchanged", { timeout: 60_000 }, async () => {
    const base = await runSh(f, policy, `${WARM}; /usr/bin/sleep 2 & sleep 0.3; ${LOOP}; wait`, RO);
    const during = await runSh(
      f,
      policy,
      `${WARM}; ${LOADER} /usr/bin/sleep 2 & sleep 0.3; ${LOOP}; wait`,
      RO,
    );
    const extra = asked(during) - asked(base);
    assert.ok(extra <= 16, `permission events: ${asked(base)} without the loader, ${asked(during)} with it`);
    assert.ok(
      (during.stats?.kernelHits ?? 0) >= 40,
      `the loop's execs still pass under their masks: ${during.stats?.kernelHits}`,
    );
    const runs = during.decisions.filter((d) => d.path === "/usr/bin/true" && d.route === "direct");
    assert.ok(runs.length >= 45 && runs.every((d) => d.allowed), String(runs.length));
  });
});
