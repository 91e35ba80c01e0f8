// §5.5 / C8 live battery: real processes under the kernel gate of @sbx/host, each case checked
// against its journal. Class C8 of the conformance harness runs it; the node:test battery in
// packages/host/test/gate asserts the same behaviour case by case.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { makePolicy, type ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import {
  EXECVEAT_PROBE_PATH,
  LoaderSet,
  gateUnavailableReason,
  hashFile,
  runGated,
  startGate,
  type GateResult,
} from "@sbx/host/gate";
import type { LiveCase } from "../types.ts";

interface Ctx {
  readonly ws: string;
  readonly denied: Digest;
  readonly ok: Digest;
  readonly python: string;
  readonly loaders: LoaderSet;
}

const LOADER = "/lib64/ld-linux-x86-64.so.2";

function compile(ws: string, name: string): string {
  const src = join(ws, `${name}.c`);
  writeFileSync(
    src,
    `#include <stdio.h>\nint main(int c,char**v){if(c>1){FILE*f=fopen(v[1],"w");if(f)fclose(f);}puts("${name.toUpperCase()}-RAN");return 0;}\n`,
  );
  const r = spawnSync("cc", ["-O1", "-o", join(ws, name), src], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cc: ${r.stderr}`);
  return join(ws, name);
}

async function setup(): Promise<Ctx> {
  const ws = mkdtempSync(join(tmpdir(), "sbx-c8-"));
  const denied = (await hashFile(compile(ws, "denied"))).digest;
  const ok = (await hashFile(compile(ws, "allowed"))).digest;
  copyFileSync(EXECVEAT_PROBE_PATH, join(ws, "execveat-probe"));
  chmodSync(join(ws, "execveat-probe"), 0o755);
  const python = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], {
    encoding: "utf8",
  }).stdout.trim();
  return { ws, denied, ok, python, loaders: await new LoaderSet().loadHost() };
}

/** outcome makes a case's result; `detail` is kept only when it failed. */
function outcome(id: string, desc: string, passed: boolean, detail?: string): LiveCase {
  return { id, desc, passed, ...(passed || detail === undefined ? {} : { detail }) };
}

function sh(c: Ctx, policy: ExecPolicy, script: string): Promise<GateResult> {
  return runGated({ policy, command: ["/bin/sh", "-c", script], workspace: c.ws, loaders: c.loaders });
}

const DENY_CASES: readonly (readonly [string, string, string])[] = [
  ["direct", "run directly", "./denied m"],
  ["renamed", "renamed", "cp denied r1 && mv r1 renamed && ./renamed m"],
  ["moved", "moved to another directory", "mkdir -p d && cp denied d/x && mv d/x d/moved && ./d/moved m"],
  ["copied", "copied", "cp denied copy && ./copy m"],
  ["hardlinked", "hard-linked", "ln -f denied hard && ./hard m"],
  ["symlinked", "symlinked", "ln -sf denied sym && ./sym m"],
  [
    "shebang",
    "as a shebang interpreter",
    "printf '#!%s/denied\\n' \"$PWD\" > s.sh && chmod +x s.sh && ./s.sh m",
  ],
  ["env", "through env", "env ./denied m"],
  ["sh-c", "through sh -c", "sh -c './denied m'"],
  ["python-execv", "through python3 os.execv", 'PY -c \'import os; os.execv("./denied", ["d", "m"])\''],
  ["execveat", "through execveat(2) with a directory fd", "./execveat-probe . denied m"],
  ["execveat-empty", "through execveat(2) with AT_EMPTY_PATH", "./execveat-probe ./denied '' m"],
  ["loader", "through the dynamic loader", `${LOADER} ./denied m`],
  [
    "loader-renamed",
    "through a renamed copy of the dynamic loader",
    `cp ${LOADER} ./ldr && ./ldr ./denied m`,
  ],
];

async function denyCase(c: Ctx, id: string, desc: string, script: string): Promise<LiveCase> {
  rmSync(join(c.ws, "m"), { force: true });
  const r = await sh(c, makePolicy("denylist", [], [c.denied]), script.replace("PY", c.python));
  const journaled = r.journal.events.some(
    (e) => e.type === "exec.decision" && e.digest === c.denied && !e.allowed && e.rule === "denied",
  );
  const ran = r.stdout.includes("DENIED-RAN") || existsSync(join(c.ws, "m"));
  const passed = !ran && journaled && !r.decisions.some((d) => d.digest === c.denied && d.allowed);
  return outcome(
    `c8-live-deny-${id}`,
    `a denied binary is refused ${desc}`,
    passed,
    `ran=${ran} journaled=${journaled}`,
  );
}

async function memfdCase(c: Ctx): Promise<LiveCase> {
  const py = `import os\nfd=os.memfd_create('x')\nos.write(fd, open('./denied','rb').read())\ntry:\n  os.execve(fd, ['x','m'], {})\nexcept OSError as e:\n  print('REFUSED', e.errno)`;
  writeFileSync(join(c.ws, "memfd.py"), py);
  const r = await sh(c, makePolicy("denylist", [], [c.denied]), `${c.python} memfd.py`);
  const passed = r.stdout.includes("REFUSED") && !r.stdout.includes("DENIED-RAN");
  return outcome(
    "c8-live-deny-memfd",
    "memfd_create + fexecve is refused (vm.memfd_noexec=2)",
    passed,
    r.stdout,
  );
}

/** Cases of the kernel-side cache (§5.5.5) and of the namespace rule: they must not weaken the gate. */
async function cacheCases(c: Ctx): Promise<LiveCase[]> {
  const policy = makePolicy("denylist", [], [c.denied]);
  const marker = join(c.ws, "m");
  rmSync(marker, { force: true });
  const ns = await sh(c, policy, "unshare -Urm ./denied m; unshare -U true; exit 0");
  const nsPassed = !ns.stdout.includes("DENIED-RAN") && !existsSync(marker);
  const re = await sh(
    c,
    policy,
    "cp allowed prog && ./prog && ./prog && cat denied > prog && ./prog m; exit 0",
  );
  const rePassed =
    !re.stdout.includes("DENIED-RAN") &&
    !existsSync(marker) &&
    re.decisions.some((d) => d.digest === c.denied && d.rule === "denied" && d.path.endsWith("/prog"));
  const warm = await sh(c, policy, `./allowed; ./allowed; ./allowed; ${LOADER} ./allowed; exit 0`);
  const direct = warm.decisions.filter((d) => d.digest === c.ok && d.route === "direct");
  const mapped = warm.decisions.some((d) => d.digest === c.ok && d.route === "loader" && d.allowed);
  return [
    outcome(
      "c8-live-deny-userns",
      "no new user or mount namespace (whose mounts would carry no mark) can be made",
      nsPassed,
      ns.stdout,
    ),
    outcome(
      "c8-live-deny-rewritten",
      "an allowed file the kernel no longer asks about, rewritten in place with denied bytes, is refused",
      rePassed,
      JSON.stringify(re.decisions),
    ),
    outcome(
      "c8-live-journal-warm",
      "every warm exec is journaled, and so is a program a loader run by hand maps",
      direct.length === 3 && mapped,
      JSON.stringify(warm.decisions),
    ),
  ];
}

const TOOLCHAIN =
  "set -e; echo 'a b c' | tr a-z A-Z | wc -w; printf 'all:\\n\\t@echo made\\n' > Makefile; make; rm -rf g; git init -q g; git -C g -c user.name=t -c user.email=t@t commit -q --allow-empty -m x; git -C g log --oneline | wc -l";

async function allowlistCases(c: Ctx): Promise<LiveCase[]> {
  const learn = await sh(c, makePolicy("denylist"), TOOLCHAIN);
  const policy = makePolicy(
    "allowlist",
    learn.decisions.flatMap((d) => (d.digest ? [d.digest] : [])),
  );
  const run = await sh(c, policy, TOOLCHAIN);
  const ranAll = run.code === 0 && run.decisions.length > 0 && run.decisions.every((d) => d.allowed);
  const out = await sh(c, policy, "./allowed; /usr/bin/id; exit 0");
  const refused =
    !out.stdout.includes("ALLOWED-RAN") && out.decisions.filter((d) => d.rule === "not-allowed").length >= 2;
  return [
    outcome(
      "c8-live-allowlist-toolchain",
      "a pipeline, make and git run with their digests allowed",
      ranAll,
      run.stderr,
    ),
    outcome("c8-live-allowlist-outside", "binaries outside the allowlist are refused (not-allowed)", refused),
  ];
}

async function killCase(c: Ctx): Promise<LiveCase> {
  const s = await startGate({
    policy: makePolicy("denylist", [], [c.denied]),
    command: ["/bin/sh", "-c", "while :; do ./denied m; sleep 0.02; done"],
    workspace: c.ws,
    loaders: c.loaders,
  });
  while (!s.decisions.some((d) => d.digest === c.denied)) await new Promise((r) => setTimeout(r, 20));
  process.kill(s.helperPid, "SIGKILL");
  await s.done;
  const end = Date.now() + 5000;
  while (existsSync(`/proc/${s.sandboxPid}`) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  const passed = !existsSync(`/proc/${s.sandboxPid}`) && !existsSync(join(c.ws, "m"));
  return outcome(
    "c8-live-helper-killed",
    "killing the helper stops the sandbox; the denied binary never runs",
    passed,
  );
}

/** runBattery runs the §5.5 live battery (C8); where the gate cannot run, every case fails with the reason. */
export async function runBattery(): Promise<LiveCase[]> {
  const why = gateUnavailableReason();
  if (why !== null) return [outcome("c8-live-gate", "the exec gate runs on this host", false, why)];
  const c = await setup();
  try {
    const out: LiveCase[] = [];
    for (const [id, desc, script] of DENY_CASES) out.push(await denyCase(c, id, desc, script));
    out.push(await memfdCase(c));
    const absolute = await sh(c, makePolicy("denylist", [c.denied], [c.denied]), "./denied");
    out.push(
      outcome(
        "c8-live-deny-absolute",
        "a digest both allowed and denied is refused",
        absolute.decisions.some((d) => d.digest === c.denied && d.rule === "denied") &&
          !absolute.stdout.includes("RAN"),
      ),
    );
    out.push(...(await cacheCases(c)));
    out.push(...(await allowlistCases(c)));
    out.push(await killCase(c));
    return out;
  } finally {
    rmSync(c.ws, { recursive: true, force: true });
  }
}
