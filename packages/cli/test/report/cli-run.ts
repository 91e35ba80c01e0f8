// A run made as an auditor's colleague would make it (issue 38): nothing but the real `sbx` binary,
// `sbx run --store st --key h.pem --detach`, no --grant; suspended frozen and thawed (so idle
// energy of resident memory is accounted), suspended with --release and resumed into a fresh
// sandbox WITHOUT --key (so the host must remember the key the run was started with), closed.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { FINISH_AGENT, kinds, sbx, startAgentRun, workspaceWithAgent } from "../lifecycle-helpers.ts";

/** The run, its store and the key it was started with. */
export interface CliRun {
  readonly dir: string;
  readonly store: string;
  readonly id: Digest;
  /** The key file given to `sbx run --key`, its public key file and its did:key. */
  readonly key: { readonly path: string; readonly pub: string; readonly did: string };
  /** What `sbx resume` (no --key) said on stderr. */
  readonly resumeErr: string;
}

async function ok(args: string[]): Promise<string> {
  const r = await sbx(args);
  assert.equal(r.code, 0, `sbx ${args.join(" ")}: ${r.err}`);
  return r.out + r.err;
}

/** ungrantedCliRun makes the run in a fresh directory under /var/tmp. */
export async function ungrantedCliRun(): Promise<CliRun> {
  const dir = mkdtempSync(join("/var/tmp", "sbx-report-auditor-"));
  const store = join(dir, "store");
  const path = join(dir, "h.pem");
  const did = (await ok(["keygen", "--out", path])).trim().split("\n")[0]!;
  const ws = workspaceWithAgent(join(dir, "ws"));
  const id = await startAgentRun({ store, ws, args: ["--key", path] });
  await ok(["suspend", id, "--store", store]);
  await new Promise((r) => setTimeout(r, 400)); // parked with its memory resident: idle energy
  await ok(["resume", id, "--store", store]);
  await ok(["suspend", id, "--release", "--store", store]);
  const resumed = await sbx(["resume", id, "--store", store, ...FINISH_AGENT]);
  assert.equal(resumed.code, 0, resumed.err);
  await ok(["close", id, "--store", store]);
  assert.deepEqual(await kinds(store, id), [
    ...["executed", "suspended", "resumed"],
    ...["executed", "suspended", "resumed"],
    ...["executed", "closed"],
  ]);
  assert.equal(existsSync(join(store, "host-key.pem")), false, "a key was given: no store key is made");
  return { dir, store, id, key: { path, pub: join(dir, "h.pub.pem"), did }, resumeErr: resumed.err };
}
