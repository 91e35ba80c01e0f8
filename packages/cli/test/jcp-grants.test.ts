// jcp issue / attenuate / inspect / verify / spend / revoke: a whole flow through files, and the
// exit codes of refusals (1) and usage errors (2).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../src/main.ts";
import { readLedger } from "@sbx/host/ledger";

async function jcp(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("jcp", argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

test("jcp grant flow: issue, attenuate, verify, spend, overspend, revoke", async () => {
  const d = mkdtempSync(join(tmpdir(), "jcp-"));
  const p = (n: string) => join(d, n);
  try {
    for (const k of ["root", "alice", "bob", "host"])
      assert.equal((await jcp(["keygen", "--out", p(`${k}.key`)])).code, 0);
    const root = ["--root", p("root.key")];
    const issued = await jcp([
      "issue",
      "--key",
      p("root.key"),
      "--holder",
      p("alice.key"),
      "--resource",
      "/fs/work/**",
      "--action",
      "read",
      "--uj",
      "5J",
      "--calls",
      "10",
      "--depth",
      "2",
      "--ttl",
      "3600000",
      "--out",
      p("root.chain"),
    ]);
    assert.equal(issued.code, 0, issued.err);
    const att = await jcp([
      "attenuate",
      "--key",
      p("alice.key"),
      "--parent",
      p("root.chain"),
      "--holder",
      p("bob.key"),
      "--resource",
      "/fs/work/src/**",
      "--uj",
      "1000000",
      "--out",
      p("bob.chain"),
      "--json",
    ]);
    assert.equal(att.code, 0, att.err);
    assert.equal((JSON.parse(att.out) as { grant: { budget: { calls: number } } }).grant.budget.calls, 10);
    // Widening and using a key that does not hold the parent are refused (exit 1).
    assert.equal(
      (
        await jcp([
          "attenuate",
          "--key",
          p("alice.key"),
          "--parent",
          p("root.chain"),
          "--holder",
          p("bob.key"),
          "--resource",
          "/fs/workx/**",
          "--out",
          p("x.chain"),
        ])
      ).code,
      1,
    );
    assert.equal(
      (
        await jcp([
          "attenuate",
          "--key",
          p("bob.key"),
          "--parent",
          p("root.chain"),
          "--holder",
          p("bob.key"),
          "--out",
          p("x.chain"),
        ])
      ).code,
      1,
    );
    assert.equal(
      (
        await jcp([
          "attenuate",
          "--key",
          p("alice.key"),
          "--parent",
          p("root.chain"),
          "--holder",
          p("bob.key"),
          "--uj",
          "6J",
          "--out",
          p("x.chain"),
        ])
      ).code,
      1,
    );
    assert.equal((await jcp(["verify", p("bob.chain"), ...root])).code, 0);
    const late = await jcp(["verify", p("bob.chain"), ...root, "--at", "2099-01-01T00:00:00Z", "--json"]);
    assert.equal(late.code, 1);
    assert.equal((JSON.parse(late.out) as { code: string }).code, "Expired");
    assert.equal((await jcp(["verify", p("bob.chain"), "--root", p("bob.key")])).code, 1);
    // --trust is the name every verify command shares; a public key file is a trusted key too.
    assert.equal((await jcp(["verify", p("bob.chain"), "--trust", p("root.key.pub.pem")])).code, 0);
    const untrusted = await jcp(["verify", p("bob.chain"), "--any-signer"]);
    assert.equal(untrusted.code, 0, untrusted.err);
    assert.match(untrusted.out, /^UNTRUSTED \(root issuer did:key:\S+ not checked against a trust set\)/);
    assert.doesNotMatch(untrusted.out, /^valid/);
    const uj = JSON.parse((await jcp(["verify", p("bob.chain"), "--any-signer", "--json"])).out) as {
      valid: boolean;
      trusted: boolean;
      root: string;
    };
    assert.deepEqual([uj.valid, uj.trusted], [true, false]);
    assert.match(uj.root, /^did:key:/);
    const spend = [
      "spend",
      "--host-key",
      p("host.key"),
      "--chain",
      p("bob.chain"),
      "--ledger",
      p("ledger"),
      ...root,
    ];
    assert.equal((await jcp([...spend, "--uj", "600000"])).code, 0);
    const over = await jcp([...spend, "--uj", "400001"]);
    assert.equal(over.code, 1);
    assert.match(over.err, /Overspend/);
    const ok = await jcp([...spend, "--uj", "400000", "--json"]);
    assert.equal(ok.code, 0, ok.err);
    assert.equal(readLedger(p("ledger")).receipts.length, 2);
    assert.equal(
      (await jcp(["revoke", "--key", p("bob.key"), "--chain", p("bob.chain"), "--list", p("revs")])).code,
      1,
    );
    assert.equal(
      (
        await jcp([
          "revoke",
          "--key",
          p("alice.key"),
          "--chain",
          p("bob.chain"),
          "--list",
          p("revs"),
          "--at",
          "0",
        ])
      ).code,
      0,
    );
    assert.equal((await jcp(["verify", p("bob.chain"), ...root, "--revocations", p("revs")])).code, 1);
    assert.equal((await jcp(["verify", p("root.chain"), ...root, "--revocations", p("revs")])).code, 0);
    // The lists are append-only log folders; a JSON list file of an older jcp is still read, and a
    // ledger or list given as such a file is refused for appending (BadLedger, exit 2).
    const entries = readdirSync(p("revs"))
      .filter((n) => /^\d{12}$/.test(n))
      .map((n) => JSON.parse(readFileSync(join(p("revs"), n), "utf8").split("\n", 2)[1]!) as unknown);
    writeFileSync(p("revs.json"), JSON.stringify(entries));
    assert.equal((await jcp(["verify", p("bob.chain"), ...root, "--revocations", p("revs.json")])).code, 1);
    const again = ["revoke", "--key", p("alice.key"), "--chain", p("bob.chain"), "--list", p("revs.json")];
    assert.equal((await jcp(again)).code, 2);
    assert.equal(
      (await jcp([...spend.slice(0, 5), "--ledger", p("revs.json"), ...root, "--uj", "1"])).code,
      2,
    );
    assert.equal((await jcp(["inspect", p("bob.chain"), "--json"])).code, 0);
    // Usage errors.
    assert.equal((await jcp(["verify", p("missing.chain"), ...root])).code, 2);
    assert.equal((await jcp(["verify", p("bob.chain")])).code, 2);
    assert.equal((await jcp(["issue", "--key", p("root.key")])).code, 2);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
