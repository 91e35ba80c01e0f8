// §5.5.5 and §9: the exec gate inside the reference sandbox. A run with an exec policy is gated: the
// gate attaches to the bubblewrap sandbox before the command runs, every exec inside is decided
// and journaled in the run's journal, and only then is S6 stated. Each case is a real run of
// runUnit({ sandbox, execPolicy }).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addressOf, testKey } from "@sbx/wire";
import { makePolicy, policyAddress, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { makeUnit, unitId } from "@sbx/sandbox-attest/unit";
import { HELPER_PATH } from "@sbx/host/gate";
import { HostError } from "../../src/errors.ts";
import { runUnit, type RunUnitResult } from "../../src/run/index.ts";
import { withFixture, type Fixture } from "../gate/fixture.ts";
import { assertRefused, DENY_ROUTES, denyScript, prepareDenyRoutes } from "../gate/routes-table.ts";

let f: Fixture;
let policy: ExecPolicy;
const none = addressOf({});
/** The system's python3 (Debian package python3): the sandbox sees the host's /usr, nothing else. */
const PYTHON = "/usr/bin/python3";
const head = addressOf({ run: "head" });

withFixture((x) => {
  f = x;
  policy = makePolicy("denylist", [], [f.deniedDigest]);
  prepareDenyRoutes(f.ws, f.denied, "/work/denied");
});

/** run runs `/bin/sh -c script` as a unit in a sandbox on the fixture's workspace (mounted at /work). */
function run(script: string, p: ExecPolicy | null): Promise<RunUnitResult> {
  const argv = ["/bin/sh", "-c", script];
  return runUnit({
    argv,
    hostKey: testKey("host"),
    unitId: unitId(makeUnit({ argv, manifest: none, level: "S0" })),
    grantsId: none,
    manifest: none,
    policy: p === null ? none : policyAddress(p),
    ...(p === null ? {} : { execPolicy: p }),
    sandbox: { workspace: f.ws },
    runHead: head,
    timeoutMs: 30_000,
  });
}

/** The gate helpers this test process started (its children; their wardens are theirs), by host pid. */
function gateHelpersOfThisProcess(): number[] {
  const mine = `--node-pid\0${String(process.pid)}\0`;
  const out: number[] = [];
  for (const n of readdirSync("/proc"))
    if (/^\d+$/.test(n))
      try {
        const c = readFileSync(`/proc/${n}/cmdline`, "latin1");
        if (
          c.includes(mine) &&
          c.includes("--attach\0") &&
          readlinkSync(`/proc/${n}/exe`) === HELPER_PATH &&
          parentOf(n) === process.pid
        )
          out.push(Number(n));
      } catch {
        // gone
      }
  return out;
}

function parentOf(pid: string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

function decisions(r: RunUnitResult) {
  return r.journal.events.flatMap((e) => (e.type === "exec.decision" ? [e] : []));
}

function statedLevel(r: RunUnitResult): string {
  return verifyAttestation(r.attestation).predicate.level;
}

describe("the exec gate inside the sandbox (runUnit with an exec policy)", () => {
  for (const [name, script, route] of DENY_ROUTES)
    test(`a denied binary is refused ${name}, and journaled`, { timeout: 60_000 }, async () => {
      const r = await run(denyScript(script, PYTHON), policy);
      const out = r.stdout.toString();
      assertRefused(out, decisions(r), f.ws, f.deniedDigest, route);
      assert.doesNotMatch(out, /status=0\b/);
      assert.equal(r.gate?.held, true);
      assert.equal(r.level, "S6");
    });

  test(
    "memfd_create + fexecve is refused (vm.memfd_noexec=2 in the sandbox)",
    { timeout: 60_000 },
    async () => {
      const py = [
        "import os",
        "fd = os.memfd_create('x')",
        "os.write(fd, open('./denied', 'rb').read())",
        "print('memfd-created', flush=True)",
        "try:",
        "    os.execve(fd, ['x', 'm'], {})",
        "except OSError as e:",
        "    print('memfd-refused', e.errno)",
      ].join("\n");
      writeFileSync(join(f.ws, "memfd.py"), py);
      const r = await run(`rm -f m; ${PYTHON} memfd.py`, policy);
      const out = r.stdout.toString();
      assert.match(out, /memfd-created\nmemfd-refused \d+/, out + r.stderr.toString());
      assert.ok(!out.includes("DENIED-RAN") && !existsSync(join(f.ws, "m")), out);
      assert.equal(r.level, "S6");
    },
  );

  test("an allowed binary runs; the attestation states S6", { timeout: 60_000 }, async () => {
    const r = await run("./allowed && /usr/bin/true && echo true-ran", policy);
    const out = r.stdout.toString();
    assert.match(out, /ALLOWED-RAN/);
    assert.match(out, /true-ran/);
    assert.deepEqual(r.outcome, { status: "exited", exit_code: 0 });
    assert.ok(
      decisions(r).some((d) => d.allowed && d.digest === f.okDigest),
      JSON.stringify(decisions(r)),
    );
    assert.ok((r.gate?.marked ?? 0) >= 3, `marked ${String(r.gate?.marked)} mounts`);
    assert.equal(r.level, "S6");
    assert.equal(statedLevel(r), "S6");
  });

  test(
    "without an exec policy the run is not gated and the level stays below S6",
    { timeout: 60_000 },
    async () => {
      const r = await run("./denied && echo ungated", null);
      assert.match(r.stdout.toString(), /DENIED-RAN/);
      assert.equal(decisions(r).length, 0);
      assert.equal(r.gate, null);
      assert.equal(r.level, "S5");
      assert.equal(statedLevel(r), "S5");
    },
  );

  test(
    "a gate that dies stops the sandbox, and S6 is not stated (fail closed)",
    { timeout: 60_000 },
    async () => {
      const started = join(f.ws, "started");
      const running = run(
        "rm -f started survived; touch started; sleep 20; touch survived; echo survived",
        policy,
      );
      while (!existsSync(started)) await new Promise((r) => setTimeout(r, 20));
      const helpers = gateHelpersOfThisProcess();
      assert.equal(helpers.length, 1, `helpers: ${helpers.join(" ")}`);
      process.kill(helpers[0] ?? 0, "SIGKILL");
      const t0 = Date.now();
      const r = await running;
      assert.ok(Date.now() - t0 < 10_000, "the sandbox outlived its gate");
      assert.ok(!r.stdout.toString().includes("survived") && !existsSync(join(f.ws, "survived")));
      assert.equal(r.gate?.held, false);
      assert.notEqual(r.outcome.status, "exited");
      assert.equal(r.level, "S5");
      assert.equal(statedLevel(r), "S5");
    },
  );

  test(
    "a gate that cannot attach refuses the run: the command never runs ungated",
    { timeout: 60_000 },
    async () => {
      const argv = ["/bin/sh", "-c", "touch ran; echo ungated"];
      await assert.rejects(
        runUnit({
          argv,
          hostKey: testKey("host"),
          unitId: unitId(makeUnit({ argv, manifest: none, level: "S0" })),
          grantsId: none,
          manifest: none,
          policy: policyAddress(policy),
          execPolicy: policy,
          // A helper that exits at once, as one that cannot join the sandbox does.
          gateOptions: { helper: "/bin/false" },
          sandbox: { workspace: f.ws },
        }),
        (e: unknown) => e instanceof HostError && e.code === "GateFailed",
      );
      assert.ok(!existsSync(join(f.ws, "ran")), "the command ran without its gate");
    },
  );

  test("an exec policy that is not the one `policy` names is refused before anything runs", async () => {
    const other = makePolicy("denylist", [], [f.okDigest]);
    const argv = ["/bin/true"];
    await assert.rejects(
      runUnit({
        argv,
        hostKey: testKey("host"),
        unitId: unitId(makeUnit({ argv, manifest: none, level: "S0" })),
        grantsId: none,
        manifest: none,
        policy: policyAddress(policy),
        execPolicy: other,
        sandbox: { workspace: f.ws },
      }),
      RangeError,
    );
  });
});
