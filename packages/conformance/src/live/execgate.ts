// §5.5 / C8 live battery: real processes inside the reference host's gated sandbox (live/gated.ts),
// each case checked against its journal and the level its attestation states. Class C8 of the
// conformance harness runs it; packages/host/test/gate and packages/host/test/sandbox/gate.test.ts
// assert the same behaviour case by case.
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makePolicy } from "@sbx/sandbox-attest/execpolicy";
import { gateUnavailableReason } from "@sbx/host/gate";
import { sandboxUnavailableReason } from "@sbx/host/sandbox";
import type { LiveCase } from "../types.ts";
import {
  gateHelpers,
  LOADER,
  outcome,
  PYTHON,
  ranDenied,
  refused,
  setup,
  sh,
  type Ctx,
  type Ran,
} from "./gated.ts";

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
  ["python-execv", "through python3 os.execv", `${PYTHON} -c 'import os; os.execv("./denied", ["d", "m"])'`],
  ["execveat", "through execveat(2) with a directory fd", "./execveat-probe . denied m"],
  ["execveat-empty", "through execveat(2) with AT_EMPTY_PATH", "./execveat-probe ./denied '' m"],
  ["loader", "through the dynamic loader", `${LOADER} ./denied m`],
  [
    "loader-renamed",
    "through a renamed copy of the dynamic loader",
    `cp ${LOADER} ./ldr && ./ldr ./denied m`,
  ],
];

/** held: the gate held the interval and the attestation states S6 (the interval continues a run head). */
const held = (r: Ran) => r.held && r.level === "S6";

async function denyCase(c: Ctx, id: string, desc: string, script: string): Promise<LiveCase> {
  rmSync(join(c.ws, "m"), { force: true });
  const r = await sh(c, makePolicy("denylist", [], [c.denied]), script);
  const journaled = refused(r, c.denied).some((e) => e.rule === "denied");
  const ran = ranDenied(c, r);
  const passed = !ran && journaled && held(r) && !r.decisions.some((d) => d.digest === c.denied && d.allowed);
  return outcome(
    `c8-live-deny-${id}`,
    `a denied binary is refused ${desc}, inside the sandbox`,
    passed,
    `ran=${ran} journaled=${journaled} held=${r.held} level=${r.level}`,
  );
}

async function memfdCase(c: Ctx): Promise<LiveCase> {
  const py = `import os\nfd=os.memfd_create('x')\nos.write(fd, open('./denied','rb').read())\ntry:\n  os.execve(fd, ['x','m'], {})\nexcept OSError as e:\n  print('REFUSED', e.errno)`;
  writeFileSync(join(c.ws, "memfd.py"), py);
  rmSync(join(c.ws, "m"), { force: true });
  const r = await sh(c, makePolicy("denylist", [], [c.denied]), `${PYTHON} memfd.py`);
  const passed = r.stdout.includes("REFUSED") && !ranDenied(c, r) && held(r);
  return outcome(
    "c8-live-deny-memfd",
    "memfd_create + fexecve is refused (vm.memfd_noexec=2)",
    passed,
    r.stdout + r.stderr,
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
  const notAllowed =
    !out.stdout.includes("ALLOWED-RAN") && out.decisions.filter((d) => d.rule === "not-allowed").length >= 2;
  return [
    outcome(
      "c8-live-allowlist-toolchain",
      "a pipeline, make and git run with their digests allowed",
      ranAll && held(run),
      learn.stderr + run.stderr,
    ),
    outcome(
      "c8-live-allowlist-outside",
      "binaries outside the allowlist are refused (not-allowed)",
      notAllowed,
    ),
  ];
}

async function killCase(c: Ctx): Promise<LiveCase> {
  for (const f of ["m", "started", "survived"]) rmSync(join(c.ws, f), { force: true });
  const running = sh(
    c,
    makePolicy("denylist", [], [c.denied]),
    "touch started; i=0; while [ $i -lt 100 ]; do ./denied m; sleep 0.05; i=$((i+1)); done; touch survived",
  );
  const end = Date.now() + 20_000;
  while (!existsSync(join(c.ws, "started")) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  const helpers = gateHelpers();
  for (const pid of helpers) process.kill(pid, "SIGKILL");
  const t0 = Date.now();
  const r = await running;
  const stopped = Date.now() - t0 < 4000 && !existsSync(join(c.ws, "survived"));
  const passed = helpers.length === 1 && stopped && !ranDenied(c, r) && !r.held && r.level !== "S6";
  return outcome(
    "c8-live-helper-killed",
    "killing the helper stops the sandbox; the denied binary never runs; S6 is not stated",
    passed,
    `helpers=${helpers.length} stopped=${stopped} held=${r.held} level=${r.level}`,
  );
}

/**
 * runBattery runs the §5.5 live battery (C8) inside the reference host's gated sandbox; where the
 * gate or the sandbox cannot run, one failing case says why.
 */
export async function runBattery(): Promise<LiveCase[]> {
  const why = gateUnavailableReason() ?? sandboxUnavailableReason();
  if (why !== null) return [outcome("c8-live-gate", "the exec gate runs on this host", false, why)];
  const c = await setup("sbx-c8-");
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
