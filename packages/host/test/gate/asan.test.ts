// §5.5.5 the helper's test build (packages/host/native/build.sh: execgate-asan, AddressSanitizer,
// UBSan and the fault hooks of $EXECGATE_FAULT): a short battery of execs runs under the
// sanitizers with no report, and calls that never fail on a healthy host are made to fail, one at a
// time, to show that the helper then refuses or stops the sandbox, never allows.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { ASAN_HELPER_PATH, UNKNOWN_PATH, startGate } from "@sbx/host/gate";
import { isHostError } from "../../src/errors.ts";
import { LOADER, withFixture, refusals, runSh, type Fixture } from "./fixture.ts";

let f: Fixture;
let policy: ExecPolicy;

withFixture((x) => {
  f = x;
  policy = makePolicy("denylist", [], [f.deniedDigest]);
});

const SANITIZERS = {
  ASAN_OPTIONS: "halt_on_error=1:detect_leaks=1",
  UBSAN_OPTIONS: "halt_on_error=1:print_stacktrace=1",
};
const REPORT = /AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:/;

/** asan runs `script` under the sanitizer build, with the faults named (comma-separated). */
function asan(script: string, fault = "", readOnly: readonly string[] = []) {
  return runSh(f, policy, script, {
    helper: ASAN_HELPER_PATH,
    env: { ...SANITIZERS, EXECGATE_FAULT: fault },
    readOnly,
  });
}

describe("under AddressSanitizer and UBSan", () => {
  test(
    "a battery of execs: every route, the caches, a long path; no report",
    { timeout: 60_000 },
    async () => {
      assert.ok(existsSync(ASAN_HELPER_PATH), "build.sh builds the sanitizer build");
      const ro = join(f.ws, "asan-ro");
      mkdirSync(ro, { recursive: true });
      copyFileSync(f.ok, join(ro, "allowed"));
      const deep = join(f.ws, "x".repeat(200), "y".repeat(200), "z".repeat(200));
      mkdirSync(deep, { recursive: true });
      copyFileSync(f.denied, join(deep, "denied"));
      writeFileSync(join(f.ws, "s.sh"), `#!${f.ok}\n`, { mode: 0o755 });
      const r = await asan(
        [
          "rm -f m",
          "for i in 1 2 3; do ./allowed; ./asan-ro/allowed; done",
          "./denied m",
          "env ./denied m",
          `${LOADER} ./allowed`,
          `${LOADER} ./denied m`,
          "./s.sh",
          `cd ${deep.slice(f.ws.length + 1)} && ./denied m; cd ${f.ws}`,
          "sh -c 'echo a | tr a b'",
          "exit 0",
        ].join("; "),
        "",
        [ro],
      );
      assert.doesNotMatch(r.stderr, REPORT, r.stderr);
      assert.equal(r.helperCode, 0, r.stderr);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!r.stdout.includes("DENIED-RAN") && !existsSync(join(f.ws, "m")), r.stdout);
      assert.ok(refusals(r, f.deniedDigest).length >= 4, JSON.stringify(r.decisions));
      assert.ok((r.stats?.kernelHits ?? 0) >= 2, JSON.stringify(r.stats));
    },
  );
});

describe("fail closed when a call fails (fault hooks of the test build)", () => {
  test(
    "fstat of the event's file fails: the exec is refused and journaled",
    { timeout: 30_000 },
    async () => {
      const r = await asan("echo never", "fstat");
      assert.doesNotMatch(r.stderr, REPORT, r.stderr);
      assert.equal(r.code, 126, "the sandbox's first exec was refused");
      assert.ok(!r.stdout.includes("never"));
      const d = r.decisions[0];
      assert.ok(
        d && !d.allowed && d.source === "timeout" && d.route === "direct",
        JSON.stringify(r.decisions),
      );
    },
  );

  test("reading an opened file fails: the open is refused and journaled", { timeout: 30_000 }, async () => {
    const r = await asan("echo never", "read");
    assert.doesNotMatch(r.stderr, REPORT, r.stderr);
    assert.ok(!r.stdout.includes("never"), r.stdout);
    assert.notEqual(r.code, 0);
    assert.ok(
      r.decisions.some((d) => !d.allowed && d.route === "loader" && d.source === "timeout"),
      JSON.stringify(r.decisions),
    );
  });

  test("the kernel does not take an answer: the sandbox stops", { timeout: 30_000 }, async () => {
    const r = await asan("echo never", "respond");
    assert.equal(r.helperCode, 79, r.stderr);
    assert.ok(!r.stdout.includes("never"));
  });

  test("a notice cannot be read: the sandbox stops", { timeout: 30_000 }, async () => {
    const r = await asan("sleep 5; echo never", "notice");
    assert.equal(r.helperCode, 80, r.stderr);
    assert.ok(!r.stdout.includes("never"));
  });

  test(
    "the notices of a loader's opens cannot be switched on: the sandbox stops",
    { timeout: 30_000 },
    async () => {
      const r = await asan(`${LOADER} /usr/bin/true; sleep 5; echo never`, "watch");
      assert.equal(r.helperCode, 81, r.stderr);
      assert.ok(!r.stdout.includes("never"));
    },
  );

  test("a decision whose path cannot be read is still journaled", { timeout: 30_000 }, async () => {
    const r = await asan("./denied m; exit 0", "readlink");
    assert.equal(r.helperCode, 0, r.stderr);
    assert.ok(
      refusals(r, f.deniedDigest).some((d) => d.path === UNKNOWN_PATH),
      JSON.stringify(r.decisions),
    );
  });

  for (const [fault, what] of [
    ["capdrop", "a capability cannot be dropped"],
    ["seccomp", "the seccomp filter cannot be installed"],
    ["procro", "/proc/sys cannot be made read-only"],
    ["closefds", "the descriptors beyond stdio cannot be closed"],
  ] as const)
    test(`${what}: the command never runs`, { timeout: 30_000 }, async () => {
      const r = await asan("echo never", fault);
      assert.equal(r.code, 71, r.stderr);
      assert.ok(!r.stdout.includes("never"));
      assert.deepEqual(r.decisions, [], "nothing was executed");
    });

  test(
    "an architecture without a seccomp filter: the helper refuses to start",
    { timeout: 30_000 },
    async () => {
      await assert.rejects(
        startGate({
          policy,
          command: ["/bin/true"],
          workspace: f.ws,
          loaders: f.loaders,
          env: { ...f.env, ...SANITIZERS, EXECGATE_FAULT: "arch" },
          helper: ASAN_HELPER_PATH,
        }),
        (e) => isHostError(e, "GateFailed"),
      );
    },
  );

  test(
    "with every capability kept, the seccomp filter alone refuses mounts",
    { timeout: 30_000 },
    async () => {
      // keepcaps skips the capability drop: mknod then works (the fault took effect), mount does not.
      mkdirSync(join(f.ws, "mnt"), { recursive: true });
      const py = `${f.python} -c 'import ctypes; c = ctypes.CDLL(None, use_errno=True); print("mount", c.mount(b"none", b"mnt", b"tmpfs", 0, None) and ctypes.get_errno())'`;
      const r = await asan(`mknod ./nod c 1 3 && echo mknod=ok; ${py}`, "keepcaps");
      assert.match(r.stdout, /mknod=ok/, r.stdout + r.stderr);
      assert.match(r.stdout, /mount 1\b/, r.stdout + r.stderr);
    },
  );
});
