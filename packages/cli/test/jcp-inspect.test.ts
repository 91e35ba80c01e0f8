// `jcp inspect`: a chain as a table (issuer → holder, scopes, budget, spent, remaining, expiry),
// spent and remaining read from a spend ledger; --json for machines.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";

async function jcp(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("jcp", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  assert.equal(code, 0, err.join("\n"));
  return out.join("\n");
}

test("jcp inspect prints the chain as a table with what each grant spent and has left", async () => {
  const d = mkdtempSync(join(tmpdir(), "jcp-inspect-"));
  const p = (n: string) => join(d, n);
  try {
    for (const k of ["root", "alice", "bob", "host"]) await jcp(["keygen", "--out", p(`${k}.key`)]);
    await jcp([
      ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), "--resource", "/fs/work/**"],
      ...["--action", "read", "--uj", "10J", "--depth", "1", "--ttl", "86400000", "--out", p("a.chain")],
    ]);
    await jcp([
      ...["attenuate", "--key", p("alice.key"), "--parent", p("a.chain"), "--holder", p("bob.key")],
      ...["--uj", "4J", "--out", p("b.chain")],
    ]);
    await jcp([
      ...["spend", "--host-key", p("host.key"), "--chain", p("b.chain"), "--ledger", p("ledger")],
      ...["--uj", "1.5J", "--root", p("root.key")],
    ]);
    const ledger = ["--ledger", p("ledger"), "--host", p("host.key")];
    const rows = (
      JSON.parse(await jcp(["inspect", p("b.chain"), ...ledger, "--json"])) as {
        table: { budget_uj: string; spent_uj: string; remaining_uj: string; scopes: string }[];
      }
    ).table;
    assert.deepEqual(
      rows.map((r) => [r.budget_uj, r.spent_uj, r.remaining_uj, r.scopes]),
      [
        ["10000000", "1500000", "8500000", "/fs/work/** [read]"],
        ["4000000", "1500000", "2500000", "/fs/work/** [read]"],
      ],
    );
    const text = (await jcp(["inspect", p("b.chain"), ...ledger])).split("\n");
    assert.match(text[0]!, /issuer → holder\s+scopes\s+budget µJ\s+spent µJ\s+remaining µJ\s+expires/);
    assert.match(text[3]!, /^1 .*4000000\s+1500000\s+2500000\s+\d{4}-/);
    // Without a ledger, spent and remaining are not known: "-".
    assert.match((await jcp(["inspect", p("b.chain")])).split("\n")[2]!, /10000000\s+-\s+-\s/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
