// jcp standing / checkpoint / amend through files: a mint burst until the rate refuses one, a
// replayed event, and an issuer-only, tighten-only amendment of a running grant (jcp §4.6, §4.7).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readKey } from "@sbx/host/keys";
import { runCli } from "../src/main.ts";

async function jcp(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("jcp", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const T0 = 1_800_000_000_000;

async function setup(d: string) {
  const p = (n: string) => join(d, n);
  for (const k of ["root", "alice", "bob"])
    assert.equal((await jcp(["keygen", "--out", p(`${k}.key`)])).code, 0);
  const issued = await jcp([
    "issue",
    "--key",
    p("root.key"),
    "--holder",
    p("alice.key"),
    "--resource",
    "/fs/**",
    "--action",
    "read",
    "--uj",
    "3000000",
    "--depth",
    "3",
    "--nbf",
    String(T0),
    "--exp",
    String(T0 + 3_600_000),
    "--out",
    p("held.chain"),
  ]);
  assert.equal(issued.code, 0, issued.err);
  return p;
}

test("jcp standing: mints on events until the rate limit refuses one; a replayed event is refused", async () => {
  const d = mkdtempSync(join(tmpdir(), "jcp-standing-"));
  try {
    const p = await setup(d);
    const created = await jcp([
      "standing",
      "create",
      "--key",
      p("root.key"),
      "--held",
      p("held.chain"),
      "--holder",
      p("bob.key"),
      "--trigger",
      "push@ci",
      "--resource",
      "/fs/ci/**",
      "--action",
      "read",
      "--uj",
      "200000",
      "--lifetime-ms",
      "600000",
      "--max-children",
      "10",
      "--max-total-uj",
      "2000000",
      "--rate",
      "2/60000",
      "--nbf",
      String(T0),
      "--exp",
      String(T0 + 3_600_000),
      "--out",
      p("policy.json"),
    ]);
    assert.equal(created.code, 0, created.err);
    const mint = (n: number, at: number) => {
      writeFileSync(
        p(`ev${n}.json`),
        JSON.stringify({ type: "push", source: "ci", id: `e${n}`, at_ms: T0 + n }),
      );
      return jcp([
        "standing",
        "mint",
        "--key",
        p("alice.key"),
        "--policy",
        p("policy.json"),
        "--held",
        p("held.chain"),
        "--ledger",
        p("mints"),
        "--event",
        p(`ev${n}.json`),
        "--at",
        String(at),
        "--out",
        p(`child${n}.chain`),
      ]);
    };
    assert.equal((await mint(0, T0 + 1000)).code, 0);
    assert.equal((await mint(1, T0 + 2000)).code, 0);
    const third = await mint(2, T0 + 3000);
    assert.equal(third.code, 1);
    assert.match(third.err, /RateExceeded/);
    const replay = await mint(0, T0 + 200_000);
    assert.equal(replay.code, 1);
    assert.match(replay.err, /EventReplayed/);
    const verified = await jcp([
      "standing",
      "verify",
      "--policy",
      p("policy.json"),
      "--held",
      p("held.chain"),
      "--ledger",
      p("mints"),
      "--root",
      readKey(p("root.key")).did,
    ]);
    assert.equal(verified.code, 0, verified.err);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test("jcp checkpoint / amend: only the issuer amends, only to tighten, never below what is spent", async () => {
  const d = mkdtempSync(join(tmpdir(), "jcp-amend-"));
  try {
    const p = await setup(d);
    const at = (ms: number) => ["--at", String(T0 + ms)];
    const cp = await jcp([
      "checkpoint",
      "--key",
      p("alice.key"),
      "--chain",
      p("held.chain"),
      "--log",
      p("log"),
      "--state",
      `blake3:${"ab".repeat(32)}`,
      "--spent-uj",
      "1000000",
      ...at(1000),
    ]);
    assert.equal(cp.code, 0, cp.err);
    const amend = (keyName: string, uj: string) =>
      jcp([
        "amend",
        "--key",
        p(keyName),
        "--chain",
        p("held.chain"),
        "--log",
        p("log"),
        "--uj",
        uj,
        ...at(2000),
      ]);
    const byHolder = await amend("alice.key", "2000000");
    assert.equal(byHolder.code, 1);
    assert.match(byHolder.err, /SeparationOfDuties/);
    const widen = await amend("root.key", "4000000");
    assert.equal(widen.code, 1);
    assert.match(widen.err, /AmendmentWidens/);
    const belowSpent = await amend("root.key", "500000");
    assert.equal(belowSpent.code, 1);
    assert.match(belowSpent.err, /BudgetBelowSpent/);
    assert.equal((await amend("root.key", "1200000")).code, 0);
    const v = await jcp([
      "checkpoint",
      "verify",
      "--chain",
      p("held.chain"),
      "--log",
      p("log"),
      "--trust",
      p("root.key"),
      ...at(3000),
      "--json",
    ]);
    assert.equal(v.code, 0, v.err);
    assert.match(v.out, /1200000/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
