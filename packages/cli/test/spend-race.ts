// The spend race (jcp §4.3): WORKERS processes run `jcp spend` of 1 J each on one grant at once,
// EACH spends apiece, against one ledger. Shared by jcp-spend-race.test.ts (npm test, small) and
// faults/spend-race.faults.ts (npm run test:faults, 1,000 spends).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { grantStore, SpendLedger } from "@sbx/jcp-grant/grant";
import { readKey } from "@sbx/host/keys";
import { runCli } from "../src/main.ts";
import { readLedger } from "@sbx/host/ledger";
import { lineWorker, tsxArgv } from "../../host/test/support/worker.ts";

async function jcp(argv: string[]): Promise<void> {
  const err: string[] = [];
  const code = await runCli("jcp", argv, { out: () => undefined, err: (l) => err.push(l) });
  assert.equal(code, 0, err.join("\n"));
}

interface Outcome {
  code: string;
  retries: number;
}

function worker(go: string, count: number, args: string[]) {
  const script = join(import.meta.dirname, "spend-race-worker.ts");
  return lineWorker<Outcome>(tsxArgv(script, [go, String(count), ...args]), "spend worker");
}

/** What a race did: the outcomes of every spend, and what the ledger verifies to afterwards. */
export interface RaceResult {
  readonly ok: number;
  readonly refused: Map<string, number>;
  readonly retries: number;
  readonly receipts: number;
  readonly spentUj: bigint;
}

/**
 * race issues one grant of `budgetJ` joules, runs `workers` processes spending 1 J `each` times at
 * once on one ledger, replays and verifies the ledger, and checks the rules: the ledger verifies,
 * every recorded spend is a receipt (no debit lost), the total never passes the budget, and the
 * budget is used up exactly as far as the spends asked (a refusal says Overspend, and only once the
 * grant is spent).
 */
export async function race(workers: number, each: number, budgetJ: number): Promise<RaceResult> {
  const d = mkdtempSync(join(tmpdir(), "jcp-race-"));
  const p = (n: string) => join(d, n);
  try {
    for (const k of ["root", "alice", "host"]) await jcp(["keygen", "--out", p(`${k}.key`)]);
    await jcp([
      ...["issue", "--key", p("root.key"), "--holder", p("alice.key")],
      ...["--resource", "/fs/work/**", "--action", "read", "--uj", `${budgetJ}J`],
      ...["--depth", "0", "--ttl", "86400000", "--out", p("alice.chain")],
    ]);
    const args = [
      ...["--host-key", p("host.key"), "--chain", p("alice.chain"), "--ledger", p("ledger")],
      ...["--root", p("root.key"), "--uj", "1J"],
    ];
    const go = p("go");
    const ws = Array.from({ length: workers }, () => worker(go, each, args));
    await Promise.all(ws.map((w) => w.ready));
    writeFileSync(go, "");
    const outcomes = (await Promise.all(ws.map((w) => w.done))).flat();

    const file = readLedger(p("ledger"));
    const host = readKey(p("host.key")).did;
    const rootDid = readKey(p("root.key")).did;
    const ledger = SpendLedger.replay(grantStore(file.grants), file.receipts, {
      roots: [rootDid],
      hosts: [host],
    });
    const [grant] = [...ledger.remaining().keys()];
    const spentUj = grant === undefined ? 0n : ledger.used(grant).uj;
    const ok = outcomes.filter((o) => o.code === "ok").length;
    const refused = new Map<string, number>();
    for (const o of outcomes) if (o.code !== "ok") refused.set(o.code, (refused.get(o.code) ?? 0) + 1);
    const result: RaceResult = {
      ok,
      refused,
      retries: outcomes.reduce((n, o) => n + Math.max(o.retries, 0), 0),
      receipts: file.receipts.length,
      spentUj,
    };
    const total = workers * each;
    assert.equal(outcomes.length, total, "every spend reported");
    assert.equal(result.receipts, ok, "every spend reported recorded is a receipt on the ledger");
    assert.equal(spentUj, BigInt(ok) * 1_000_000n, "the ledger's total is the recorded spends");
    assert.ok(spentUj <= BigInt(budgetJ) * 1_000_000n, "the total never passes the budget");
    assert.equal(ok, Math.min(total, budgetJ), "spends are refused only once the budget is used up");
    assert.deepEqual(
      [...refused.keys()].filter((c) => c !== "Overspend"),
      [],
      "every refusal is Overspend",
    );
    return result;
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}
