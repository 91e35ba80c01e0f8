// §5.5.5 the kernel's half of the cache (ignore masks on allowed inodes) and what it must not
// weaken: every exec it lets through unasked is still journaled, a file rewritten in place is asked
// about again, a loader run as a program still has every file it maps journaled, and no process in
// the sandbox can make a mount namespace whose mounts carry no mark.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { LOADER, withFixture, refusals, runSh, type Fixture } from "./fixture.ts";

let f: Fixture;
let policy: ExecPolicy;

withFixture((x) => {
  f = x;
  policy = makePolicy("denylist", [], [f.deniedDigest]);
});

describe("the kernel-side cache", () => {
  test("every warm exec is journaled, though the kernel no longer asks", { timeout: 30_000 }, async () => {
    // Only a read-only mount is cached (§5.5.5): the program runs from one.
    const ro = join(f.ws, "ro");
    mkdirSync(ro, { recursive: true });
    copyFileSync(f.ok, join(ro, "allowed"));
    const r = await runSh(f, policy, "for i in 1 2 3 4 5 6; do ./ro/allowed; done", { readOnly: [ro] });
    const runs = r.decisions.filter((d) => d.digest === f.okDigest);
    assert.equal(runs.length, 6, JSON.stringify(runs));
    assert.ok(runs.every((d) => d.allowed && d.route === "direct" && d.rule === "default"));
    assert.equal(runs[0]?.source, "hash");
    assert.ok(runs.slice(1).every((d) => d.source === "cache"));
    assert.ok((r.stats?.kernelHits ?? 0) >= 5, `kernel hits ${r.stats?.kernelHits}`);
    assert.ok((r.stats?.marks ?? 0) >= 1);
    // The journal holds one event per decision (refusals checks the count).
    assert.deepEqual(refusals(r, f.okDigest), []);
  });

  test(
    "one process execing the same files again and again: each exec is journaled",
    { timeout: 30_000 },
    async () => {
      // `exec env env env ./allowed`: one pid runs env three times, and the loader four times. The
      // kernel merges a notice into an identical queued one, so none may be left waiting (notice.c).
      const r = await runSh(f, policy, "for i in 1 2 3; do ./allowed; done; exec env env env ./allowed");
      const last = r.decisions.filter((d) => d.digest === f.okDigest).at(-1);
      assert.ok(last !== undefined);
      const mine = r.decisions.filter((d) => d.pid === last.pid);
      const env = mine.filter((d) => d.path.endsWith("/env"));
      const ld = mine.filter((d) => d.path.includes("ld-linux") && d.route === "interpreter");
      assert.equal(env.length, 3, JSON.stringify(mine));
      assert.ok(ld.length >= 4, JSON.stringify(mine));
    },
  );

  test("a static program that execs itself: each exec is journaled", { timeout: 60_000 }, async () => {
    const src = join(f.ws, "reexec.c");
    writeFileSync(
      src,
      `#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(int c, char **v) { int n = c > 1 ? atoi(v[1]) : 0; if (n <= 0) { puts("REEXEC-DONE"); return 0; } char b[16]; snprintf(b, sizeof b, "%d", n - 1); execl(v[0], v[0], b, (char *)0); return 1; }\n`,
    );
    const cc = spawnSync("cc", ["-static", "-O1", "-o", join(f.ws, "reexec"), src], { encoding: "utf8" });
    assert.equal(cc.status, 0, cc.stderr);
    const r = await runSh(f, policy, "./reexec 5; ./reexec 5");
    assert.equal(r.stdout.match(/REEXEC-DONE/g)?.length, 2, r.stdout);
    const runs = r.decisions.filter((d) => d.path.endsWith("/reexec") && d.route === "direct" && d.allowed);
    assert.equal(runs.length, 12, JSON.stringify(runs));
  });

  test("a marked file rewritten in place with denied bytes is refused", { timeout: 30_000 }, async () => {
    const r = await runSh(
      f,
      policy,
      "rm -f m; cp allowed prog && ./prog && ./prog && cat denied > prog && ./prog m; echo status=$?",
    );
    assert.equal(r.stdout.match(/ALLOWED-RAN/g)?.length, 2, r.stdout);
    assert.ok(!r.stdout.includes("DENIED-RAN"), r.stdout);
    assert.match(r.stdout, /status=126/);
    assert.ok(!existsSync(join(f.ws, "m")));
    const refused = refusals(r, f.deniedDigest);
    assert.ok(
      refused.some((d) => d.route === "direct" && d.path.endsWith("/prog")),
      JSON.stringify(refused),
    );
  });

  test(
    "a loader run as a program after warm execs: its mappings are journaled",
    { timeout: 30_000 },
    async () => {
      const r = await runSh(
        f,
        policy,
        `rm -f m; ./allowed; ./allowed; ${LOADER} ./allowed; ${LOADER} ./denied m`,
      );
      assert.equal(r.stdout.match(/ALLOWED-RAN/g)?.length, 3, r.stdout);
      assert.ok(!r.stdout.includes("DENIED-RAN") && !existsSync(join(f.ws, "m")), r.stdout);
      const loaded = r.decisions.filter((d) => d.route === "loader" && d.allowed);
      assert.ok(
        loaded.some((d) => d.digest === f.okDigest),
        `the allowed program mapped by the loader is journaled: ${JSON.stringify(r.decisions)}`,
      );
      assert.ok(
        loaded.some((d) => d.path.includes("libc.so")),
        "the libraries it maps are journaled",
      );
      const direct = r.decisions.filter((d) => d.route === "direct" && d.path.includes("ld-linux"));
      assert.equal(direct.length, 2, "both runs of the loader as a program are journaled as direct");
      assert.ok(refusals(r, f.deniedDigest).some((d) => d.route === "loader" && d.rule === "denied"));
    },
  );
});

describe("no unmarked mount namespace", () => {
  test(
    "a new user and mount namespace cannot be made, so the denied binary never runs",
    { timeout: 30_000 },
    async () => {
      // unshare(CLONE_NEWUSER) through libc, printing the errno (1 = EPERM).
      const py = `${f.python} -c 'import ctypes; c = ctypes.CDLL(None, use_errno=True); print("errno", c.unshare(0x10000000) and ctypes.get_errno())'`;
      const r = await runSh(
        f,
        policy,
        `rm -f m; unshare -Urm ./denied m; echo "unshare=$?"; unshare -U true; echo "userns=$?"; ${py}`,
      );
      assert.ok(!r.stdout.includes("DENIED-RAN") && !existsSync(join(f.ws, "m")), r.stdout);
      assert.match(r.stdout, /unshare=1/);
      assert.match(r.stdout, /userns=1/);
      assert.match(r.stdout, /^errno 1$/m, "unshare(CLONE_NEWUSER) from python fails with EPERM");
      assert.match(r.stderr, /unshare failed: Operation not permitted/);
    },
  );

  test("threads and processes are still made (clone3 falls back to clone)", { timeout: 30_000 }, async () => {
    const py = `${f.python} -c 'import threading, subprocess; t = threading.Thread(target=print, args=("THREAD",)); t.start(); t.join(); print(subprocess.run(["./allowed"], capture_output=True).stdout.decode().strip())'`;
    const r = await runSh(f, policy, py);
    assert.match(r.stdout, /THREAD/);
    assert.match(r.stdout, /ALLOWED-RAN/);
    assert.equal(r.code, 0, r.stderr);
  });
});
