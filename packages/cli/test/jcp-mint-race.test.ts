// Concurrent minters on one mint ledger (jcp §4.6 on the append-only log): 8 processes mint at once
// on distinct events; the caps and the rate are checked on the head each entry is appended to, so
// together they never pass them. Rate 5 per minute: exactly 5 children, every other mint refused
// RateExceeded. A cap of 4 children with a generous rate: exactly 4, the rest MintCapExceeded. The
// ledger verifies either way. On the old whole-file ledger, racing minters each read the same file,
// all passed the checks, and the last writer's file won (debits lost, caps passed).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";
import { lineWorker, tsxArgv } from "../../host/test/support/worker.ts";

async function jcp(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("jcp", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

interface Outcome {
  code: string;
  retries: number;
}

function worker(go: string, outDir: string, events: string[], args: string[]) {
  const script = join(import.meta.dirname, "mint-race-worker.ts");
  return lineWorker<Outcome>(tsxArgv(script, [go, outDir, ...events, "--", ...args]), "mint worker");
}

const WORKERS = 8;
const EACH = 3;

async function race(
  name: string,
  caps: string[],
): Promise<{ codes: Map<string, number>; retries: number; length: number }> {
  const d = mkdtempSync(join(tmpdir(), `jcp-mint-race-${name}-`));
  const p = (n: string) => join(d, n);
  try {
    for (const k of ["root", "alice", "bob"])
      assert.equal((await jcp(["keygen", "--out", p(`${k}.key`)])).code, 0);
    const now = Date.now();
    const issued = await jcp([
      ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), "--resource", "/fs/**"],
      ...["--action", "read", "--uj", "100J", "--depth", "2", "--ttl", "3600000", "--out", p("held.chain")],
    ]);
    assert.equal(issued.code, 0, issued.err);
    const created = await jcp([
      ...["standing", "create", "--key", p("root.key"), "--held", p("held.chain"), "--holder", p("bob.key")],
      ...["--trigger", "push@ci", "--resource", "/fs/ci/**", "--action", "read", "--uj", "1J"],
      ...["--lifetime-ms", "600000", "--max-total-uj", "100J", ...caps],
      ...["--nbf", String(now - 60_000), "--exp", String(now + 3_600_000), "--out", p("policy.json")],
    ]);
    assert.equal(created.code, 0, created.err);
    mkdirSync(p("ev"));
    mkdirSync(p("out"));
    const args = [
      ...["--key", p("alice.key"), "--policy", p("policy.json"), "--held", p("held.chain")],
      ...["--ledger", p("mints")],
    ];
    const go = p("go");
    const workers = Array.from({ length: WORKERS }, (_, w) => {
      const evs = Array.from({ length: EACH }, (_, i) => {
        const f = p(`ev/w${w}-${i}.json`);
        writeFileSync(f, JSON.stringify({ type: "push", source: "ci", id: `w${w}-${i}`, at_ms: now }));
        return f;
      });
      return worker(go, p("out"), evs, args);
    });
    await Promise.all(workers.map((w) => w.ready));
    writeFileSync(go, "");
    const outcomes = (await Promise.all(workers.map((w) => w.done))).flat();
    assert.equal(outcomes.length, WORKERS * EACH);
    const codes = new Map<string, number>();
    for (const o of outcomes) codes.set(o.code, (codes.get(o.code) ?? 0) + 1);
    const v = await jcp([
      ...["standing", "verify", "--policy", p("policy.json"), "--held", p("held.chain")],
      ...["--ledger", p("mints"), "--trust", p("root.key"), "--json"],
    ]);
    assert.equal(v.code, 0, v.err);
    const length = (JSON.parse(v.out) as { length: number }).length;
    const retries = outcomes.reduce((s, o) => s + Math.max(o.retries, 0), 0);
    return { codes, retries, length };
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

test("8 concurrent minters never pass the rate: rate 5/min, 24 events, exactly 5 children", async () => {
  const r = await race("rate", ["--rate", "5/60000", "--max-children", "100"]);
  assert.deepEqual([...r.codes].sort(), [
    ["RateExceeded", WORKERS * EACH - 5],
    ["ok", 5],
  ]);
  assert.equal(r.length, 5);
  console.log(`rate race: 5 minted, ${WORKERS * EACH - 5} RateExceeded, ${r.retries} StaleHead retries`);
});

test("8 concurrent minters never pass the cap: max 4 children, 24 events, exactly 4 children", async () => {
  const r = await race("cap", ["--rate", "1000/60000", "--max-children", "4"]);
  assert.deepEqual([...r.codes].sort(), [
    ["MintCapExceeded", WORKERS * EACH - 4],
    ["ok", 4],
  ]);
  assert.equal(r.length, 4);
  console.log(`cap race: 4 minted, ${WORKERS * EACH - 4} MintCapExceeded, ${r.retries} StaleHead retries`);
});
