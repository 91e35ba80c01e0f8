// §5.5.5 / C8 live: what the C8 batteries share. A workspace with a freshly compiled binary to deny
// and one to allow; each case is `/bin/sh -c SCRIPT` run as a unit inside the reference host's
// gated bubblewrap sandbox (runScript with an exec policy: the workspace at /work, the host's /usr
// read-only, the gate attached before the command runs), and judged by its journal.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, testKey, type Digest } from "@sbx/wire";
import type { ExecPolicy } from "@sbx/sandbox-attest/execpolicy";
import type { ExecDecision } from "@sbx/sandbox-attest/journal";
import { EXECVEAT_PROBE_PATH, HELPER_PATH, LoaderSet, hashFile, type GateStats } from "@sbx/host/gate";
import { runScript } from "@sbx/host/run";
import type { LiveCase } from "../types.ts";

/** The dynamic loader of this host's /bin/sh (the sandbox sees the host's /usr). */
export const LOADER = "/lib64/ld-linux-x86-64.so.2";
/** The system's python3: the sandbox sees /usr and nothing else of the host. */
export const PYTHON = "/usr/bin/python3";
/** The run-record head the battery's intervals continue (§13), so a held gate is stated as S6. */
const HEAD = addressOf({ c8: "live" });

/** The battery's workspace: the host directory mounted at /work in every case's sandbox. */
export interface Ctx {
  readonly ws: string;
  readonly denied: Digest;
  readonly ok: Digest;
  readonly loaders: LoaderSet;
}

/** What one gated run showed. */
export interface Ran {
  readonly stdout: string;
  readonly stderr: string;
  /** The command's exit code, or null when it was killed. */
  readonly code: number | null;
  readonly decisions: readonly ExecDecision[];
  readonly stats: GateStats | null;
  /** The gate held the whole interval (§5.5.5). */
  readonly held: boolean;
  /** The level the attestation states (§9). */
  readonly level: string;
}

/** compile builds a C program into the workspace that prints NAME-RAN and, given a path, leaves a marker there. */
export function compile(ws: string, name: string): string {
  const src = join(ws, `${name}.c`);
  writeFileSync(
    src,
    `#include <stdio.h>\nint main(int c,char**v){if(c>1){FILE*f=fopen(v[1],"w");if(f)fclose(f);}puts("${name.toUpperCase()}-RAN");return 0;}\n`,
  );
  const r = spawnSync("cc", ["-O1", "-o", join(ws, name), src], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cc: ${r.stderr}`);
  return join(ws, name);
}

/** setup makes the workspace (under `prefix`) with `denied`, `allowed` and the execveat probe. */
export async function setup(prefix: string): Promise<Ctx> {
  const ws = mkdtempSync(join(tmpdir(), prefix));
  const denied = (await hashFile(compile(ws, "denied"))).digest;
  const ok = (await hashFile(compile(ws, "allowed"))).digest;
  copyFileSync(EXECVEAT_PROBE_PATH, join(ws, "execveat-probe"));
  chmodSync(join(ws, "execveat-probe"), 0o755);
  return { ws, denied, ok, loaders: await new LoaderSet().loadHost() };
}

/** outcome makes a case's result; `detail` is kept only when it failed. */
export function outcome(id: string, desc: string, passed: boolean, detail?: string): LiveCase {
  return { id, desc, passed, ...(passed || detail === undefined ? {} : { detail }) };
}

/** sh runs `/bin/sh -c script` as a unit in the gated sandbox on the workspace (mounted at /work). */
export async function sh(c: Ctx, policy: ExecPolicy, script: string): Promise<Ran> {
  const r = await runScript(script, {
    sandbox: { workspace: c.ws },
    execPolicy: policy,
    gateOptions: { loaders: c.loaders },
    hostKey: testKey("host"),
    runHead: HEAD,
  });
  return {
    stdout: r.stdout.toString(),
    stderr: r.stderr.toString(),
    code: r.outcome.status === "exited" ? r.outcome.exit_code : null,
    decisions: r.journal.events.flatMap((e) => (e.type === "exec.decision" ? [e] : [])),
    stats: r.gate?.stats ?? null,
    held: r.gate?.held === true,
    level: r.level,
  };
}

/** The decisions that refused digest `d`. */
export const refused = (r: Ran, d: Digest): ExecDecision[] =>
  r.decisions.filter((x) => x.digest === d && !x.allowed);

/** The denied program ran: it printed its tag or left its marker `m` in the workspace. */
export const ranDenied = (c: Ctx, r: Ran): boolean =>
  r.stdout.includes("DENIED-RAN") || existsSync(join(c.ws, "m"));

/** gateHelpers lists the gate helpers this process started (its children running HELPER_PATH). */
export function gateHelpers(): number[] {
  const out: number[] = [];
  for (const n of readdirSync("/proc"))
    if (/^\d+$/.test(n))
      try {
        const stat = readFileSync(`/proc/${n}/stat`, "latin1");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        if (ppid === process.pid && readlinkSync(`/proc/${n}/exe`) === HELPER_PATH) out.push(Number(n));
      } catch {
        // gone
      }
  return out;
}
