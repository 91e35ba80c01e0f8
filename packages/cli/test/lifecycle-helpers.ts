// Helpers of the durable-run CLI tests: the real `sbx` binary (packages/cli/bin/sbx.mjs, compiled by
// scripts/test.mjs before the tests), an agent-like program that works in steps keeping its state in
// its workspace, and handshakes by polling files and the record (no timing assertions).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { decodeRecord } from "@sbx/sandbox-attest/runrecord";
import { FileStore } from "@sbx/host/store";
import { lockHolder } from "@sbx/host/durable";

export const SBX = join(import.meta.dirname, "..", "bin", "sbx.mjs");

/** One finished `sbx` invocation. */
export interface Ran {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** sbx runs the real binary with `args` and resolves when it ends, with the pid it had. */
export function sbx(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<Ran & { readonly pid: number }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [SBX, ...args], { env: { ...process.env, ...env } });
    let out = "";
    let err = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.stderr.on("data", (b: Buffer) => (err += b.toString()));
    p.on("close", (code) => resolve({ code, out, err, pid: p.pid ?? 0 }));
  });
}

/**
 * The agent: five steps, its step counter in `state`, a line per step in `log.txt`; after step 2 it
 * waits until a file `go` exists (the test's handshake), and at the end writes `result`.
 */
export const AGENT = `#!/bin/sh
n=$(cat state 2>/dev/null || echo 0)
while [ "$n" -lt 5 ]; do
  n=$((n+1))
  echo "step $n" >> log.txt
  echo $n > state
  echo "did step $n"
  while [ "$n" = 2 ] && [ ! -e go ]; do sleep 0.02; done
done
cat log.txt | wc -l > result
`;

/** workspaceWithAgent makes a workspace holding agent.sh. */
export function workspaceWithAgent(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "agent.sh"), AGENT);
  chmodSync(join(dir, "agent.sh"), 0o755);
  return dir;
}

/** waitFor polls `cond` until it holds (the test runner's timeout bounds it). */
export async function waitFor(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; ; i++) {
    if (cond()) return;
    if (i > 20_000) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** fileIs reads a workspace file's trimmed text, or null. */
export function fileIs(path: string): string | null {
  return existsSync(path) ? readFileSync(path, "utf8").trim() : null;
}

/** kinds lists the record's segment kinds, from the store's files. */
export async function kinds(storeDir: string, id: Digest): Promise<string[]> {
  const bytes = await FileStore.open(storeDir, { readOnly: true }).readRecordBytes(id);
  if (bytes === null) return [];
  return decodeRecord(bytes).record.segments.map((s) => s.kind);
}

/** runIdOf reads the run id from `sbx run`'s first output line. */
export function runIdOf(out: string): Digest {
  const m = /^run (blake3:[0-9a-f]{64})$/m.exec(out);
  if (!m?.[1]) throw new Error(`no run id in ${JSON.stringify(out)}`);
  return m[1] as Digest;
}

/** What lets a parked agent finish, after `sbx resume RUN …`: the go file, then the agent again. */
export const FINISH_AGENT = ["--", "/bin/sh", "-c", "touch go; exec ./agent.sh"] as const;

/** How startAgentRun starts the agent. */
export interface AgentRun {
  /** The run store (`--store`); without it, the store of `env` (SBX_STORE) or the default. */
  readonly store?: string;
  /** The workspace holding agent.sh (workspaceWithAgent, or an agent of the test's own). */
  readonly ws: string;
  /** More `sbx run` flags, before the command (e.g. `--grant …`, `--exec-policy …`). */
  readonly args?: readonly string[];
  readonly env?: Record<string, string>;
}

/**
 * startAgentRun starts /work/agent.sh as a detached durable run (`sbx run --detach [--store S]
 * --workspace WS ARGS… -- /work/agent.sh`), asserts that it started, waits until the agent sits at
 * step 2 (its `state` file says 2) and returns the run id.
 */
export async function startAgentRun(o: AgentRun): Promise<Digest> {
  const store = o.store === undefined ? [] : ["--store", o.store];
  const r = await sbx(
    ["run", "--detach", ...store, "--workspace", o.ws, ...(o.args ?? []), "--", "/work/agent.sh"],
    o.env,
  );
  assert.equal(r.code, 0, r.err);
  const id = runIdOf(r.out);
  await waitFor(() => fileIs(join(o.ws, "state")) === "2", "the agent at step 2");
  return id;
}

/** settled waits until no live process holds a run of the file store `store` (a killed holder's lock is dead). */
export async function settled(store: string): Promise<void> {
  const live = join(store, "live");
  await waitFor(
    () =>
      readdirSync(live)
        .filter((n) => n.endsWith(".lock"))
        .every((n) => lockHolder(join(live, n)) === null),
    "no live holder",
  );
}

/** waitKinds polls the file store `store` until the run's record holds at least `n` segments. */
export async function waitKinds(store: string, id: Digest, n: number): Promise<void> {
  for (let i = 0; (await kinds(store, id)).length < n; i++) {
    if (i > 4000) throw new Error(`the record never reached ${String(n)} segments`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
