// §5.5 battery, denylist: a denied binary is refused however it is reached, each case a real
// process under the kernel gate, each refusal found in the journal with its route and rule.
import { describe, test } from "node:test";
import { spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { EXECVEAT_PROBE_PATH } from "@sbx/host/gate";
import { LOADER, withFixture, refusals, runSh, type Fixture } from "./fixture.ts";

let f: Fixture;
let policy: ExecPolicy;

withFixture((x) => {
  f = x;
  policy = makePolicy("denylist", [], [f.deniedDigest]);
  mkdirSync(join(f.ws, "sub/deeper"), { recursive: true });
  copyFileSync(f.denied, join(f.ws, "renamed-tool"));
  chmodSync(join(f.ws, "renamed-tool"), 0o755);
  writeFileSync(join(f.ws, "script.sh"), `#!${f.denied}\necho script body\n`, { mode: 0o755 });
  copyFileSync(EXECVEAT_PROBE_PATH, join(f.ws, "execveat-probe"));
  chmodSync(join(f.ws, "execveat-probe"), 0o755);
});

/** The cases: a script that tries to run the denied binary one way, and the route it must be refused on. */
const cases: [string, string, "direct" | "interpreter" | "loader"][] = [
  ["directly", "./denied m", "direct"],
  ["renamed", "mv renamed-tool other-name && ./other-name m", "direct"],
  ["moved", "cp denied sub/deeper/tool && mv sub/deeper/tool sub/moved && ./sub/moved m", "direct"],
  ["copied", "cp denied copy && ./copy m", "direct"],
  ["hard-linked", "ln denied hard && ./hard m", "direct"],
  ["symlinked", "ln -s denied sym && ./sym m", "direct"],
  ["as a shebang interpreter", "./script.sh m", "interpreter"],
  ["through env", "env ./denied m", "direct"],
  ["through sh -c", "sh -c './denied m'", "direct"],
  ["through python3 os.execv", 'PY -c \'import os; os.execv("./denied", ["denied", "m"])\'', "direct"],
  ["through execveat (dirfd + name)", "./execveat-probe . denied m", "direct"],
  ["through execveat (AT_EMPTY_PATH, fexecve form)", "./execveat-probe ./denied '' m", "direct"],
  ["through the dynamic loader", `${LOADER} ./denied m`, "loader"],
  [
    "through a renamed copy of the loader",
    `cp ${LOADER} ./not-a-loader && ./not-a-loader ./denied m`,
    "loader",
  ],
];

describe("denylist: a denied binary is refused", () => {
  for (const [name, script, route] of cases)
    test(name, { timeout: 30_000 }, async () => {
      const r = await runSh(f, policy, `rm -f m; ${script.replace("PY", f.python)}; echo "status=$?"`);
      assert.ok(!r.stdout.includes("DENIED-RAN"), `the denied binary ran: ${r.stdout}`);
      assert.ok(!existsSync(join(f.ws, "m")), "the denied binary left its marker");
      const refused = refusals(r, f.deniedDigest);
      assert.ok(refused.length > 0, `no refusal journaled: ${JSON.stringify(r.decisions)}`);
      assert.ok(
        refused.some((d) => d.route === route && d.rule === "denied" && d.digest === f.deniedDigest),
        `no ${route} refusal: ${JSON.stringify(refused)}`,
      );
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
