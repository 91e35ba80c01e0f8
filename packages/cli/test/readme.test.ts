// The README's command blocks, run (issue 29: "every command block in the README is executed by a
// test"). Each ```sh block is found by its first line and run as the README prints it, line by line,
// by bash in a scratch folder whose PATH starts with the real `sbx` and `jcp` (packages/cli/bin) and
// whose HOME is the scratch folder's (so the default run store is its own). The rewrites a block
// needs to run here are listed with it; each must match the README's text, so a README that drifts
// from its test fails here. Placeholders: `RUN` is the run id the block printed last; a line whose
// comment says `host A:`/`host B:`, or that follows `# on another host`, runs as that host (its own
// HOME, key and local state). Three blocks administer the machine (apt-get, a PostgreSQL server's
// roles and network configuration): they are checked against what CI installs and what the
// two-host fault test configures, not run; the quick start is what .ci/run itself runs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startCluster, stopCluster, type TestCluster } from "@sbx/host/pg";

const ROOT = resolve(import.meta.dirname, "..", "..", "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const CI = readFileSync(join(ROOT, ".ci", "run"), "utf8");
const IMAGE = process.env.SBX_TEST_DEBIAN_IMAGE ?? "";

/** Every ```sh block of the README, with the line it starts on. */
function shBlocks(): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const lines = README.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```sh") continue;
    const start = i + 1;
    let j = start;
    while (j < lines.length && lines[j] !== "```") j++;
    out.push({ line: start + 1, text: lines.slice(start, j).join("\n") });
    i = j;
  }
  return out;
}

/** The one block whose first line starts with `first`. */
function block(first: string): string {
  const found = shBlocks().filter((b) => b.text.startsWith(first));
  assert.equal(found.length, 1, `README: one sh block starting ${JSON.stringify(first)}`);
  return found[0]!.text;
}

/** Applies each rewrite, each of which must change the text (else the README drifted). */
function rewrite(text: string, rules: readonly [string | RegExp, string][]): string {
  let t = text;
  for (const [from, to] of rules) {
    const next = t.replace(from, to);
    assert.notEqual(next, t, `README block no longer holds ${String(from)}:\n${text}`);
    t = next;
  }
  return t;
}

/** An agent that works in steps: the first run waits (to be suspended), the resumed one finishes. */
const AGENT =
  '#!/bin/sh\necho step >> steps\n[ "$(wc -l < steps)" -ge 2 ] || exec sleep 600\necho "done after $(wc -l < steps) steps"\n';

let dir = "";
let bin = "";
let cluster: TestCluster | null = null;

interface Host {
  readonly name: string;
  readonly home: string;
}
const hosts = new Map<string, Host>();

function host(name: string): Host {
  let h = hosts.get(name);
  if (h === undefined) {
    h = { name, home: join(dir, `home-${name}`) };
    mkdirSync(h.home, { recursive: true });
    hosts.set(name, h);
  }
  return h;
}

interface LineResult {
  readonly line: string;
  readonly status: number;
  readonly out: string;
  readonly err: string;
}

/**
 * Runs a block line by line (a trailing `\` joins lines), each with bash -e in `cwd`, as the host
 * its comment names (default A). `RUN` becomes the last run id printed; an `export NAME=VALUE`
 * line (or its part before `&&`) holds for every later line. Returns each line's result; a line
 * that exits other than `expect(line)` (default 0) fails the test.
 */
function runBlock(
  text: string,
  o: { cwd: string; env?: Record<string, string>; expect?: (line: string) => number | null },
): LineResult[] {
  const joined = text.replace(/\\\n\s*/g, "");
  const results: LineResult[] = [];
  const exports: string[] = [];
  let run = "";
  let current = host("A");
  for (const raw of joined.split("\n")) {
    let line = raw.trim();
    if (line === "") continue;
    if (/^#\s*on another host/.test(line)) {
      current = host("B");
      continue;
    }
    if (line.startsWith("#")) continue;
    const named = /#\s*host ([A-Z]):/.exec(line);
    if (named !== null) current = host(named[1]!);
    if (run !== "") line = line.replace(/\bRUN\b/g, run);
    const exp = /^(export [A-Za-z_][A-Za-z0-9_]*=(?:"[^"]*"|\S+))(?: && (.*))?$/.exec(line);
    if (exp !== null) {
      exports.push(exp[1]!);
      if (exp[2] === undefined) continue;
      line = exp[2];
    }
    const r = spawnSync("bash", ["-e", "-o", "pipefail", "-c", [...exports, line].join("\n")], {
      cwd: o.cwd,
      encoding: "utf8",
      timeout: 120_000,
      env: {
        PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        HOME: current.home,
        XDG_DATA_HOME: join(current.home, ".local", "share"),
        LANG: "C.UTF-8",
        ...o.env,
      },
    });
    const res = { line, status: r.status ?? -1, out: r.stdout, err: r.stderr };
    results.push(res);
    const want = o.expect === undefined ? 0 : o.expect(line);
    if (want !== null) {
      assert.equal(
        res.status,
        want,
        `README line exited ${res.status}, not ${want}: ${line}\n${res.out}\n${res.err}`,
      );
    }
    const id = /\brun (blake3:[0-9a-f]{64})/.exec(res.out + res.err);
    if (id !== null) run = id[1]!;
  }
  return results;
}

/** The packages of the apt-get install line in `text`. */
function aptPackages(text: string): string[] {
  const m = /apt-get install (?:-[^\s]+ )*([^\n]+)/.exec(text.replace(/\\\n\s*/g, ""));
  assert.ok(m, "an apt-get install line");
  return m[1]!.split(/\s+/).filter((w) => w !== "" && !w.startsWith("-") && !w.startsWith(">"));
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), "sbx-readme-"));
  bin = join(dir, "bin");
  mkdirSync(bin);
  for (const b of ["sbx", "jcp"]) symlinkSync(join(ROOT, "packages", "cli", "bin", `${b}.mjs`), join(bin, b));
});

after(() => {
  if (cluster !== null) stopCluster(cluster);
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

test("quick start: the two commands are what .ci/run runs", () => {
  const text = block("npm ci && npm run demo");
  assert.match(text, /^npm ci && npm run demo\b.*\nnpm ci && npm test\b/);
  assert.match(CI, /^step npm-ci npm ci\b/m);
  assert.match(CI, /^\s*step demo demo$/m);
  assert.match(CI, /\bstep npm-test npm test;/);
});

test("prerequisites: every package of the README's apt-get line is one CI installs, and is installed here", () => {
  const readme = aptPackages(block("sudo apt-get install -y --no-install-recommends"));
  const ci = aptPackages(CI.slice(CI.indexOf("apt-get install")));
  for (const p of readme) {
    assert.ok(ci.includes(p), `README names ${p}, which .ci/run does not install`);
    const q = spawnSync("dpkg-query", ["-W", "-f", "${Status}", p], { encoding: "utf8" });
    assert.equal(q.stdout, "install ok installed", `${p} is not installed on this machine`);
  }
});

test("sbx and jcp as commands: npm link puts both on PATH", () => {
  const prefix = join(dir, "npm-prefix");
  const r = runBlock(block("npm link"), {
    cwd: ROOT,
    env: { npm_config_prefix: prefix, PATH: `${join(prefix, "bin")}:${process.env.PATH ?? ""}` },
  });
  assert.match(r[1]!.out, /^sbx \d+\.\d+\.\d+/m);
  assert.match(r[1]!.out, /usage: jcp /);
});

/** A scratch folder holding the Debian test image as an OCI archive and a devcontainer naming it. */
function imageFixture(name: string): string {
  assert.ok(
    IMAGE !== "" && existsSync(join(IMAGE, "oci", "index.json")),
    'SBX_TEST_DEBIAN_IMAGE must name the Debian test image: eval "$(scripts/test-image.sh)"',
  );
  const cwd = join(dir, name);
  mkdirSync(join(cwd, ".devcontainer"), { recursive: true });
  const tar = spawnSync("tar", ["-C", join(IMAGE, "oci"), "-cf", join(cwd, "image.oci.tar"), "."]);
  assert.equal(tar.status, 0);
  writeFileSync(
    join(cwd, ".devcontainer", "devcontainer.json"),
    '{ "image": "example/dev:1", "remoteUser": "agent", "workspaceFolder": "/workspace" }\n',
  );
  return cwd;
}

test("environments from images: import, pin, run on the image", () => {
  const cwd = imageFixture("image");
  const r = runBlock(block("sbx image import ./image.oci.tar"), { cwd });
  assert.match(r[0]!.out, /^example\/dev@sha256:[0-9a-f]{64}$/m);
  assert.match(readFileSync(join(cwd, "dc.pinned.json"), "utf8"), /example\/dev@sha256:[0-9a-f]{64}/);
  assert.match(r[2]!.out + r[2]!.err, /Python 3\.11/); // the image's python3, not the host's
});

test("durable runs on an image: run, suspend, export; import and resume on another host", () => {
  const cwd = imageFixture("durable");
  runBlock(block("sbx image import ./image.oci.tar"), { cwd });
  mkdirSync(join(cwd, "ws"));
  writeFileSync(join(cwd, "ws", "agent.sh"), AGENT);
  chmodSync(join(cwd, "ws", "agent.sh"), 0o755);
  const hostA = host("A");
  const imagesB = join(dir, "images-B");
  const text = rewrite(block("sbx run --detach --manifest dc.pinned.json"), [
    ["--trust host-key.pub.pem", `--trust ${join(hostA.home, ".local", "share", "sbx", "host-key.pub.pem")}`],
    ["--images DIR", `--images ${imagesB}`],
  ]);
  // Host B's image store holds the same image (by digest): imported there first.
  const imp = spawnSync(
    join(bin, "sbx"),
    ["image", "import", "./image.oci.tar", "--name", "other/name:2", "--images", imagesB],
    {
      cwd,
      encoding: "utf8",
      env: { ...process.env, HOME: host("B").home, XDG_DATA_HOME: join(host("B").home, ".local", "share") },
    },
  );
  assert.equal(imp.status, 0, imp.stderr);
  const r = runBlock(text, { cwd });
  assert.ok(existsSync(join(cwd, "run.tar")));
  // The resumed agent found its first step in the restored workspace and finished.
  assert.match(r.at(-1)!.out, /^done after 2 steps$/m);
  assert.match(r.at(-1)!.err, /resumed blake3:/);
});

test("warm pools: create on the image, list, claim, destroy", () => {
  const cwd = imageFixture("pool");
  runBlock(block("sbx image import ./image.oci.tar"), { cwd });
  try {
    const r = runBlock(
      rewrite(block("sbx pool create --pool web"), [["--manifest MANIFEST", "--manifest dc.pinned.json"]]),
      {
        cwd,
      },
    );
    assert.match(r[0]!.out, /4 sandboxes parked frozen/);
    assert.equal(r[1]!.out.match(/sandbox frozen/g)?.length, 4);
    assert.match(r[2]!.out, /^42$/m);
    assert.match(r[3]!.out, /^destroyed pool /m);
  } finally {
    // A block that failed half-way leaves parked sandboxes running: ended here, whatever happened
    // (after the README's own destroy this finds no pool, and says so).
    runBlock("sbx pool destroy --pool web", { cwd, expect: () => null });
  }
});

/** A folder with the keys the grant examples name (sbx keygen). */
function keysFixture(name: string, keys: readonly string[]): string {
  const cwd = join(dir, name);
  mkdirSync(cwd, { recursive: true });
  for (const k of keys) {
    const r = spawnSync(join(bin, "sbx"), ["keygen", "--out", k], { cwd, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
  }
  return cwd;
}

const GRANT = "jcp issue --key root.key --holder alice.key";

test("running under a grant: issue, run until the budget stops it, verify and inspect the ledger", () => {
  const cwd = keysFixture("grant", ["root.key", "alice.key", "host.key"]);
  const r = runBlock(block(GRANT), { cwd, expect: (l) => (l.startsWith("sbx run") ? 1 : 0) });
  assert.match(r[1]!.out, /stopped: BudgetExhausted/);
  const debited = /grant\s+debited (\d+) µJ on ledger/.exec(r[1]!.out);
  assert.ok(debited, r[1]!.out);
  assert.match(r[2]!.out, new RegExp(`spent ${debited[1]!} of 2000000 µJ`));
  assert.match(r[3]!.out, new RegExp(`\\b2000000\\s+${debited[1]!}\\b`));
});

test("standing grants drive runs, and a crashed sbx on-event loses nothing", () => {
  const cwd = keysFixture("standing", ["root.key", "alice.key", "host.key", "bob.key"]);
  runBlock(block(GRANT).split("\n").slice(0, 2).join("\n"), { cwd });
  writeFileSync(
    join(cwd, "events.jsonl"),
    `${JSON.stringify({ type: "push", source: "ci", id: "e1", at_ms: Date.now() })}\n`,
  );
  const job = ["-- make test", "-- sh -c 'echo tested > /work/tested'"] as const;
  const standing = rewrite(block("jcp standing create"), [[job[0], job[1]]]);
  const lines = standing.replace(/\\\n\s*/g, "").split("\n");
  const onEvent = lines.find((l) => l.startsWith("sbx on-event"))!;
  runBlock(lines.filter((l) => l.startsWith("jcp standing create")).join("\n"), { cwd });
  // The first feed dies right after the mint, before the run (the fault point of sbx-on-event-crash).
  const crashed = runBlock(onEvent, {
    cwd,
    env: { SBX_STORE_CRASH_ON: "on-event:minted" },
    expect: () => null,
  });
  assert.notEqual(crashed[0]!.status, 0);
  assert.ok(!existsSync(join(cwd, "runs")) || !existsSync(join(cwd, "runs", "1", "tested")));
  const flags = /^sbx on-event (.*) --events events\.jsonl (.*) -- /.exec(onEvent);
  assert.ok(flags, onEvent);
  const recovery = rewrite(block("sbx on-event …"), [
    [/sbx on-event … --events events\.jsonl/, `sbx on-event ${flags[1]!} --events events.jsonl ${flags[2]!}`],
    [/sbx on-event … --pending --rerun/, `sbx on-event ${flags[1]!} ${flags[2]!} --pending --rerun`],
    [/sbx on-event … --pending/, `sbx on-event ${flags[1]!} ${flags[2]!} --pending`],
    [/-- make test/g, job[1]],
  ]);
  const r = runBlock(recovery, { cwd });
  assert.match(r[0]!.out, /recovered/);
  assert.match(r[1]!.out, /^0 events/m);
  const verify = runBlock(lines.filter((l) => l.startsWith("jcp standing verify")).join("\n"), { cwd });
  assert.match(verify[0]!.out, /valid mint ledger: 1 children/);
});

test("PostgreSQL: the store initialised, two hosts on it, ledgers in it", async () => {
  cluster = await startCluster();
  const url = cluster.url;
  // The machine's server, its roles and its network configuration are administration, not run here:
  // the package is one CI installs, and the two-host fault test makes the same configuration
  // (listen addresses, a scram-sha-256 pg_hba line for the hosts' subnet) in a throwaway cluster.
  const local = block("sudo apt-get install -y postgresql");
  assert.ok(aptPackages(CI.slice(CI.indexOf("apt-get install"))).includes("postgresql"));
  const network = block('sudo -u postgres psql -c "CREATE ROLE sbx');
  const twohost = readFileSync(join(ROOT, "packages", "cli", "test", "twohost.ts"), "utf8");
  assert.match(network, /listen_addresses/);
  assert.match(network, /scram-sha-256/);
  assert.match(twohost, /listen_addresses = /);
  assert.match(twohost, /scram-sha-256\\n/);
  const cwd = keysFixture("pg", ["root.pem", "host.pem"]);
  runBlock(
    rewrite(local.split("\n")[1]!, [[/postgresql:\/\/\$\(id -un\)@\/sbx\?host=\/var\/run\/postgresql/, url]]),
    { cwd },
  );
  mkdirSync(join(cwd, "ws"));
  writeFileSync(join(cwd, "ws", "agent.sh"), AGENT);
  chmodSync(join(cwd, "ws", "agent.sh"), 0o755);
  const issued = spawnSync(
    join(bin, "jcp"),
    [
      "issue",
      "--key",
      "root.pem",
      "--holder",
      "host.pem",
      "--resource",
      "/fs/work/**",
      "--action",
      "read",
    ].concat(["--uj", "5J", "--depth", "1", "--ttl", "86400000", "--out", "chain.json"]),
    { cwd, encoding: "utf8" },
  );
  assert.equal(issued.status, 0, issued.stderr);
  const pub = (h: string) => join(dir, `home-${h}`, ".local", "share", "sbx", "host-key.pub.pem");
  const hosts = rewrite(block("export SBX_STORE=postgresql://sbx:choose-one@10.0.0.1"), [
    ["postgresql://sbx:choose-one@10.0.0.1:5432/sbx", url],
    [
      "sbx import run.tar --trust …",
      `sbx import run.tar --store ./copy --trust ${pub("A")} --trust ${pub("B")}`,
    ],
    ["--trust hostA.pub.pem --trust hostB.pub.pem", `--trust ${pub("A")} --trust ${pub("B")}`],
  ]);
  const r = runBlock(hosts, { cwd });
  assert.match(r.find((x) => x.line.startsWith("sbx resume"))!.out, /^done after 2 steps$/m);
  assert.match(r.find((x) => x.line.startsWith("sbx verify"))!.out, /VALID/);
  assert.match(r.find((x) => x.line.startsWith("jcp spend"))!.out, / {2}4000000 µJ$/m); // 5 J less the 1 J spent
});
