// sandbox-attest §5.6 item 8: a run whose grant names a resource the host does not enforce (a
// network destination other than a host loopback port, a filesystem pattern naming no one host
// path, a kind the host has no mapping for) is refused at start with `ResourceUnsupported` naming
// each one, before anything runs or is debited — never run with part of its scope dropped. The same
// refusal for a one-shot run and a durable start (both take prepareGrantRun, as resume, a pool
// claim and on-event's runs do).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unboundedResources, unsupportedResources } from "@sbx/host/grants";
import { runCli } from "../src/main.ts";

async function cli(tool: "sbx" | "jcp", argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(tool, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

test("unsupportedResources: what the host maps is enforced, everything else is named", () => {
  const scope = (resources: string[], actions: string[]) => ({ resources, actions });
  const cases: [string[], string[], string[]][] = [
    [["/fs/work/**", "/fs/data/**", "/fs/work/sub/**"], ["read"], []],
    [["/fs/work/**", "/net/127.0.0.1/8080"], ["connect", "write"], []],
    [["/fs/work/**", "/exec/**", "/exec/blake3:00"], ["exec", "read"], []],
    [["/fs/work/**", "/net/pypi.org/443"], ["connect", "read"], ["/net/pypi.org/443"]],
    [["/fs/work/**", "/net/127.0.0.1/8080"], ["read"], ["/net/127.0.0.1/8080"]],
    [["/fs/work/**", "/net/127.0.0.1/*"], ["connect", "read"], ["/net/127.0.0.1/*"]],
    [
      ["/fs/work/**", "/fs/home/*/x", "/fs/**", "/fs/etc/**"],
      ["read"],
      ["/fs/home/*/x", "/fs/**", "/fs/etc/**"],
    ],
    [["/fs/work/**"], ["connect"], ["/fs/work/**"]],
    [["/fs/work/**", "/model/gpt/**", "/**"], ["read"], ["/model/gpt/**", "/**"]],
  ];
  cases.forEach(([resources, actions, want], i) => {
    assert.deepEqual(unsupportedResources(scope(resources, actions), "/work"), want, `case ${i}`);
  });
});

test("unboundedResources: with write, every host folder but the workspace is named (no disk bound, §5.3 item 2)", () => {
  const scope = (resources: string[], actions: string[]) => ({ resources, actions });
  const cases: [string[], string[], string[]][] = [
    [["/fs/work/**", "/fs/work/sub/**", "/fs/data/**"], ["read"], []],
    [["/fs/work/**", "/fs/work/sub/**", "/net/127.0.0.1/80"], ["connect", "write"], []],
    [
      ["/fs/work/**", "/fs/data/**", "/fs/srv/f"],
      ["read", "write"],
      ["/fs/data/**", "/fs/srv/f"],
    ],
    [["/fs/work", "/fs/data/**"], ["write"], ["/fs/data/**"]],
    // Named no one path, or under the system: ResourceUnsupported's, not these.
    [["/fs/work/**", "/fs/**", "/fs/etc/**", "/fs/home/*/x"], ["write"], []],
  ];
  cases.forEach(([resources, actions, want], i) => {
    assert.deepEqual(unboundedResources(scope(resources, actions), "/work"), want, `case ${i}`);
  });
});

test("a grant naming /net/pypi.org/443 with connect is refused ResourceUnsupported: run and durable start", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-unsupported-"));
  const p = (n: string) => join(dir, n);
  try {
    for (const k of ["root", "alice", "host"])
      assert.equal((await cli("jcp", ["keygen", "--out", p(`${k}.key`)])).code, 0);
    const issued = await cli("jcp", [
      ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), "--resource", "/fs/work/**"],
      ...["--resource", "/net/pypi.org/443", "--resource", "/fs/home/*/cache"],
      ...["--action", "read", "--action", "write", "--action", "connect", "--uj", "10J"],
      ...["--depth", "0", "--ttl", "86400000", "--out", p("alice.chain")],
    ]);
    assert.equal(issued.code, 0, issued.err);
    mkdirSync(p("ws"));
    const grant = [
      ...["--key", p("host.key"), "--grant", p("alice.chain"), "--trust", p("root.key")],
      ...["--ledger", p("ledger"), "--workspace", p("ws")],
    ];
    const unit = ["--", "sh", "-c", "echo ran >> proof"];
    for (const front of [["run"], ["run", "--detach", "--store", p("store")]]) {
      const r = await cli("sbx", [...front, ...grant, ...unit]);
      assert.equal(r.code, 1, `${front.join(" ")}: ${r.out}`);
      assert.match(r.err, /ResourceUnsupported/, front.join(" "));
      assert.match(r.err, /\/net\/pypi\.org\/443/);
      assert.match(r.err, /\/fs\/home\/\*\/cache/);
      assert.equal(existsSync(p("ws/proof")), false, "nothing ran");
      assert.equal(existsSync(p("ledger")), false, "nothing was debited");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
