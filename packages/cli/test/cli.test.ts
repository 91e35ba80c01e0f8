// The dispatcher and keygen: help, version, exit codes, key files written 0600 and read back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDidKey } from "@sbx/wire";
import { runCli, loadCommands, type Tool } from "../src/main.ts";
import { readKey } from "@sbx/host/keys";

async function cli(tool: Tool, argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(tool, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

test("--help, --version and unknown commands", async () => {
  for (const tool of ["sbx", "jcp"] as const) {
    const h = await cli(tool, ["--help"]);
    assert.equal(h.code, 0);
    assert.match(h.out, /keygen/);
    assert.match((await cli(tool, ["--version"])).out, new RegExp(`^${tool} \\d+\\.\\d+\\.\\d+`));
    assert.equal((await cli(tool, ["no-such-command"])).code, 2);
    assert.equal((await cli(tool, [])).code, 2);
  }
});

test("every command of both tools has help text", async () => {
  for (const tool of ["sbx", "jcp"] as const)
    for (const c of await loadCommands(tool)) {
      const r = await cli(tool, [...c.name.split(" "), "--help"]);
      assert.equal(r.code, 0, `${tool} ${c.name} --help`);
      assert.match(r.out, /usage:/, `${tool} ${c.name} help has a usage line`);
    }
});

test("keygen writes a 0600 key file, prints its did:key, and refuses to overwrite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "keygen-"));
  try {
    const p = join(dir, "k.json");
    const r = await cli("sbx", ["keygen", "--out", p]);
    assert.equal(r.code, 0);
    assert.ok(isDidKey(r.out.trim()));
    assert.equal(statSync(p).mode & 0o777, 0o600);
    assert.equal(readKey(p).did, r.out.trim());
    assert.equal((await cli("jcp", ["keygen", "--out", p])).code, 2);
    assert.equal((await cli("jcp", ["keygen", "--out", p, "--force", "--json"])).code, 0);
    assert.equal((await cli("sbx", ["keygen"])).code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
