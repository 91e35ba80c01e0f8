// Helpers of the tests of durable runs under a JCP grant chain: a root, a holder and a host key with a
// grant chain over /fs/work/** of a given budget, the agent started under it as a detached durable
// run, the spend ledger's receipts read back from its files, and the totals of `sbx verify` on the
// run and `jcp verify` on the ledger.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { payloadOf, type Digest, type Envelope } from "@sbx/wire";
import { runCli } from "../src/main.ts";
import { sbx, startAgentRun, workspaceWithAgent } from "./lifecycle-helpers.ts";

export async function jcp(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("jcp", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

export interface Granted {
  readonly dir: string;
  readonly p: (n: string) => string;
  /** The grant flags sbx run and sbx resume take. */
  readonly flags: string[];
}

export async function granted(uj: string): Promise<Granted> {
  const dir = mkdtempSync(join("/var/tmp", "sbx-granted-"));
  const p = (n: string) => join(dir, n);
  for (const k of ["root", "alice", "host"])
    assert.equal((await jcp(["keygen", "--out", p(`${k}.key`)])).code, 0);
  const issued = await jcp([
    ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), "--resource", "/fs/work/**"],
    ...["--action", "read", "--action", "write", "--uj", uj, "--depth", "0", "--ttl", "86400000"],
    ...["--out", p("alice.chain")],
  ]);
  assert.equal(issued.code, 0, issued.err);
  const flags = [
    ...["--key", p("host.key"), "--trust", p("root.key"), "--ledger", p("ledger")],
    ...["--revocations", p("revoked")],
  ];
  return { dir, p, flags };
}

/** startAgent starts the agent under the grant (or `grant`: a chain or set file) as a detached durable run, at step 2. */
export async function startAgent(g: Granted, env: Record<string, string> = {}, grant = g.p("alice.chain")) {
  const store = g.p("store");
  const ws = workspaceWithAgent(g.p("ws"));
  const id = await startAgentRun({ store, ws, args: ["--grant", grant, ...g.flags], env });
  return { store, ws, id };
}

/**
 * resumeGranted runs `sbx resume` on the run `id` of the file store `store` under the grant's flags,
 * in the workspace `g.p(ws)`, detached unless `detach` is false.
 */
export function resumeGranted(g: Granted, store: string, id: Digest, ws: string, detach = true) {
  return sbx([
    "resume",
    id,
    "--store",
    store,
    "--workspace",
    g.p(ws),
    ...(detach ? ["--detach"] : []),
    ...g.flags,
  ]);
}

export { waitKinds } from "./lifecycle-helpers.ts";

export interface Spend {
  uj: string;
  calls: number;
  cites?: { attestation: string; energy: string };
}

/**
 * intervalSpends: the debits of executed intervals (a resume's idle debit is the other kind: calls 0,
 * citing the resumed segment; it is there or not by how long the run was parked, which a test does
 * not decide).
 */
export function intervalSpends(dir: string): Spend[] {
  return ledgerSpends(dir).filter((x) => x.calls !== 0);
}

/** The ledger's receipts' payloads, in order (each entry file: the head it extends, a newline, the entry). */
export function ledgerSpends(dir: string): Spend[] {
  if (!existsSync(dir)) return []; // no spend yet: the ledger folder is made by the first
  return readdirSync(dir)
    .filter((f) => /^\d{12}$/.test(f))
    .sort()
    .map((f) => {
      const text = readFileSync(join(dir, f), "utf8");
      const entry = JSON.parse(text.slice(text.indexOf("\n") + 1)) as { receipt: Envelope };
      return payloadOf(entry.receipt) as unknown as Spend;
    });
}

export async function verifyTotals(g: Granted, store: string, id: Digest) {
  const v = await sbx(["verify", id, "--store", store, "--trust", g.p("host.key"), "--json"]);
  assert.equal(v.code, 0, v.out + v.err);
  const run = JSON.parse(v.out) as { valid: boolean; energy: { total_uj: string; idle_uj: string } };
  const l = await jcp([
    ...["verify", g.p("alice.chain"), "--trust", g.p("root.key"), "--ledger", g.p("ledger")],
    ...["--host", g.p("host.key"), "--json"],
  ]);
  assert.equal(l.code, 0, l.err);
  const led = (JSON.parse(l.out) as { ledger: { receipts: number; spent_uj: string } }).ledger;
  return { run, led };
}
