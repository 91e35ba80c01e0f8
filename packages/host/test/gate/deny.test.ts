// §5.5 battery, denylist: a denied binary is refused however it is reached, each case a real
// process under the kernel gate, each refusal found in the journal with its route and rule.
import { describe, test } from "node:test";
import { spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { withFixture, refusals, runSh, type Fixture } from "./fixture.ts";
import { assertRefused, DENY_ROUTES, denyScript, prepareDenyRoutes } from "./routes-table.ts";

let f: Fixture;
let policy: ExecPolicy;

withFixture((x) => {
  f = x;
  policy = makePolicy("denylist", [], [f.deniedDigest]);
  prepareDenyRoutes(f.ws, f.denied, f.denied);
});

describe("denylist: a denied binary is refused", () => {
  for (const [name, script, route] of DENY_ROUTES)
    test(name, { timeout: 30_000 }, async () => {
      const r = await runSh(f, policy, denyScript(script, f.python));
      assertRefused(r.stdout, refusals(r, f.deniedDigest), f.ws, f.deniedDigest, route);
      assert.equal(r.code, 0, r.stderr);
    });

  test(
    "through memfd_create + fexecve (vm.memfd_noexec=2 in the sandbox's pid namespace)",
    { timeout: 30_000 },
    async () => {
      const py = [
        "import os, sys",
        "data = open('./denied', 'rb').read()",
        "try:",
        "    os.memfd_create('x', 0x0010)",
        "    print('MFD_EXEC-ALLOWED')",
        "except OSError as e:",
        "    print('MFD_EXEC-REFUSED', e.errno)",
        "fd = os.memfd_create('x')",
        "os.write(fd, data)",
        "try:",
        "    os.execve(fd, ['x', 'm'], {})",
        "except OSError as e:",
        "    print('FEXECVE-REFUSED', e.errno)",
        "try:",
        "    os.execv('/proc/self/fd/%d' % fd, ['x', 'm'])",
        "except OSError as e:",
        "    print('PROCFD-REFUSED', e.errno)",
      ].join("\n");
      writeFileSync(join(f.ws, "memfd.py"), py);
      const r = await runSh(f, policy, `rm -f m; ${f.python} memfd.py; cat /proc/sys/vm/memfd_noexec`);
      assert.ok(!r.stdout.includes("DENIED-RAN"), r.stdout);
      assert.match(r.stdout, /MFD_EXEC-REFUSED/);
      assert.match(r.stdout, /FEXECVE-REFUSED 13/);
      assert.match(r.stdout, /PROCFD-REFUSED 13/);
      assert.match(r.stdout, /^2$/m, "vm.memfd_noexec reads 2 inside the sandbox");
      assert.ok(!existsSync(join(f.ws, "m")));
      // The python3 that tried is journaled; no allowed decision of the denied digest exists.
      assert.ok(r.decisions.some((d) => d.path === f.python || d.path.endsWith("python3.11")));
      assert.ok(!r.decisions.some((d) => d.digest === f.deniedDigest && d.allowed));
      // Control: outside the sandbox (vm.memfd_noexec=0 in the host's namespace) the same route runs
      // the harmless allowed program, so the refusal above is the sandbox's doing.
      const host = spawnSync(f.python, ["-c", py.replaceAll("./denied", f.ok)], {
        cwd: f.ws,
        encoding: "utf8",
      });
      assert.match(host.stdout, /ALLOWED-RAN/);
    },
  );

  test(
    "deny is absolute: a digest on both lists is refused, in allowlist mode too",
    { timeout: 30_000 },
    async () => {
      const both = makePolicy("allowlist", [f.deniedDigest], [f.deniedDigest]);
      const learn = await runSh(f, makePolicy("denylist"), "true");
      const base = learn.decisions.flatMap((d) => (d.digest ? [d.digest] : []));
      const p = makePolicy("allowlist", [...base, ...both.allow], both.deny);
      const r = await runSh(f, p, "./denied m; echo status=$?");
      assert.ok(!r.stdout.includes("DENIED-RAN"));
      assert.match(r.stdout, /status=126/);
      assert.ok(refusals(r, f.deniedDigest).some((d) => d.rule === "denied"));
    },
  );

  test("the same binary, not denied, runs (control)", { timeout: 30_000 }, async () => {
    const r = await runSh(f, makePolicy("denylist"), "./denied; echo status=$?");
    assert.match(r.stdout, /DENIED-RAN/);
    assert.ok(r.decisions.some((d) => d.digest === f.deniedDigest && d.allowed && d.rule === "default"));
  });
});
