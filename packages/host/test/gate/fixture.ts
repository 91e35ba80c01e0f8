// Shared set-up of the exec gate battery (§5.5): a workspace with a freshly compiled binary to deny
// and one to allow, the real python3 executable, and helpers to run and inspect gated sandboxes.
import { after, before } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import type { ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import type { ExecDecision } from "@sbx/sandbox-attest/journal";
import {
  ASAN_HELPER_PATH,
  HELPER_PATH,
  LoaderSet,
  hashFile,
  runGated,
  type GateResult,
} from "@sbx/host/gate";

/** The dynamic loader of this host's /bin/sh. */
export const LOADER = "/lib64/ld-linux-x86-64.so.2";

/** A C program that says it ran and, given a path, leaves a marker file there. */
const PROGRAM = (tag: string) => `#include <stdio.h>
int main(int c, char **v) { if (c > 1) { FILE *f = fopen(v[1], "w"); if (f) fclose(f); } puts("${tag}-RAN"); return 0; }
`;

/** The battery's workspace. */
export interface Fixture {
  readonly ws: string;
  readonly denied: string;
  readonly deniedDigest: Digest;
  readonly ok: string;
  readonly okDigest: Digest;
  readonly python: string;
  readonly loaders: LoaderSet;
  /** The environment every gated run of this fixture gets: it carries a tag naming its helpers. */
  readonly env: NodeJS.ProcessEnv;
  /** Live helper (and warden) processes started by this fixture. */
  helpers(): number[];
  cleanup(): void;
}

function compile(ws: string, name: string): string {
  const src = join(ws, `${name}.c`);
  writeFileSync(src, PROGRAM(name.toUpperCase()));
  const r = spawnSync("cc", ["-O1", "-o", join(ws, name), src], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cc failed: ${r.stderr}`);
  return join(ws, name);
}

/** makeFixture compiles the two programs into a fresh workspace. */
export async function makeFixture(): Promise<Fixture> {
  const ws = mkdtempSync(join(tmpdir(), "sbx-gate-"));
  const tag = ws.slice(-6);
  const denied = compile(ws, "denied");
  const ok = compile(ws, "allowed");
  const py = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
  return {
    ws,
    denied,
    deniedDigest: (await hashFile(denied)).digest,
    ok,
    okDigest: (await hashFile(ok)).digest,
    python: py.stdout.trim(),
    loaders: await new LoaderSet().loadHost(),
    env: { ...process.env, SBX_GATE_TEST_TAG: tag },
    helpers: () => helperProcesses(tag),
    cleanup: () => rmSync(ws, { recursive: true, force: true }),
  };
}

/** runSh runs a shell script in the fixture's gated workspace. */
export function runSh(
  f: Fixture,
  policy: ExecPolicy,
  script: string,
  extra: {
    timeoutMs?: number;
    withholdAnswers?: boolean;
    readOnly?: readonly string[];
    helper?: string;
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<GateResult> {
  return runGated({
    policy,
    command: ["/bin/sh", "-c", script],
    workspace: f.ws,
    loaders: f.loaders,
    env: { ...f.env, ...extra.env },
    timeoutMs: extra.timeoutMs ?? 5000,
    ...(extra.withholdAnswers ? { withholdAnswers: true } : {}),
    ...(extra.readOnly ? { readOnly: extra.readOnly } : {}),
    ...(extra.helper !== undefined ? { helper: extra.helper } : {}),
  });
}

/**
 * refusals lists the refusals of one digest as the §8 journal holds them (exec.decision events),
 * after checking the journal holds exactly one event per decision the gate reported.
 */
export function refusals(r: GateResult, d: Digest): ExecDecision[] {
  const events = r.journal.events.flatMap((e) => (e.type === "exec.decision" ? [e] : []));
  if (events.length !== r.decisions.length)
    throw new Error(`journal has ${events.length} exec.decision events for ${r.decisions.length} decisions`);
  return events.filter((x) => x.digest === d && !x.allowed);
}

/** pidsInNamespace lists the host pids whose pid namespace is `ns` (a /proc/PID/ns/pid link text). */
export function pidsInNamespace(ns: string): number[] {
  const out: number[] = [];
  for (const n of readdirSync("/proc")) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (readlinkSync(`/proc/${n}/ns/pid`) === ns) out.push(Number(n));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** helperProcesses lists live gate helper processes (either build) whose environment carries `tag`. */
export function helperProcesses(tag: string): number[] {
  const out: number[] = [];
  for (const n of readdirSync("/proc")) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (
        [HELPER_PATH, ASAN_HELPER_PATH].includes(readlinkSync(`/proc/${n}/exe`)) &&
        readFileSync(`/proc/${n}/environ`, "latin1").includes(`SBX_GATE_TEST_TAG=${tag}`)
      )
        out.push(Number(n));
    } catch {
      /* gone or kernel thread */
    }
  }
  return out;
}

/** sleep waits `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** noHelpersLeft waits up to 6 s for every helper and warden of `f` to be gone, and returns those left. */
export async function noHelpersLeft(f: Fixture): Promise<number[]> {
  const end = Date.now() + 6000;
  while (f.helpers().length > 0 && Date.now() < end) await sleep(50);
  return f.helpers();
}

/**
 * withFixture registers a test file's hooks: a fresh fixture (handed to `ready`) before its tests,
 * and after them a check that no helper or warden outlives them, then the workspace removed.
 */
export function withFixture(ready: (f: Fixture) => void | Promise<void>): void {
  let f: Fixture | undefined;
  before(async () => {
    f = await makeFixture();
    await ready(f);
  });
  after(async () => {
    if (f === undefined) return;
    assert.deepEqual(await noHelpersLeft(f), [], "no helper or warden outlives the battery");
    f.cleanup();
  });
}
