// `sbx run`: a sandboxed run by default, honest levels (§9: --level only lowers; --unsandboxed is
// S0 whatever is asked), and usage errors for contradictory flags. Before, `sbx run --level S5`
// signed S5 for a plain child process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, canonicalize, type Envelope } from "@sbx/wire";
import { makePolicy, policyAddress } from "@sbx/sandbox-attest/execpolicy";
import { hashFile } from "@sbx/host/gate";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { runCli } from "../src/main.ts";

async function sbxRun(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli("sbx", ["run", ...argv], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

function statedIn(dir: string): string {
  const env = JSON.parse(readFileSync(join(dir, "attestation.json"), "utf8")) as Envelope;
  return verifyAttestation(env).predicate.level;
}

test("sbx run states the level it provided: S4 sandboxed, S0 unsandboxed, whatever --level asks", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "sbx-run-cli-"));
  try {
    const cases: [string[], string][] = [
      [["--level", "S5"], "S4"],
      [[], "S4"],
      [["--level", "S2"], "S2"],
      [["--unsandboxed", "--level", "S5"], "S0"],
      [["--unsandboxed"], "S0"],
    ];
    for (const [i, [flags, want]] of cases.entries()) {
      const out = join(tmp, String(i));
      // A workspace inside tmp (removed below); --unsandboxed takes none.
      const ws = join(tmp, `ws${String(i)}`);
      mkdirSync(ws);
      const place = flags.includes("--unsandboxed") ? [] : ["--workspace", ws];
      const r = await sbxRun([...flags, ...place, "--out", out, "--", "/bin/true"]);
      assert.equal(r.code, 0, `${flags.join(" ")}: ${r.err}`);
      assert.equal(statedIn(out), want, flags.join(" "));
      assert.match(r.out, new RegExp(`level ${want}`));
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("sbx run: the command's output is streamed to files and limits are flags", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "sbx-run-cli-"));
  try {
    mkdirSync(join(tmp, "ws"));
    const r = await sbxRun([
      "--workspace",
      join(tmp, "ws"),
      "--memory",
      "67108864",
      "--pids",
      "32",
      "--cpus",
      "0.5",
      "--out",
      tmp,
      "--",
      "sh",
      "-c",
      "echo hi",
    ]);
    assert.equal(r.code, 0, r.err);
    assert.equal(readFileSync(join(tmp, "stdout"), "utf8"), "hi\n");
    assert.match(r.out, /memory 67108864 B, cpu 0\.5, pids 32/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("sbx run: contradictory or malformed sandbox flags are usage errors", async () => {
  for (const argv of [
    ["--unsandboxed", "--memory", "1000000", "--", "true"],
    ["--watch", "/tmp", "--", "true"],
    ["--pids", "0", "--", "true"],
    ["--cpus", "lots", "--", "true"],
    ["--level", "S9", "--", "true"],
  ])
    assert.equal((await sbxRun(argv)).code, 2, argv.join(" "));
});

test("sbx run --exec-policy: the gate runs inside the sandbox; a denied exec is refused and journaled", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "sbx-run-gate-"));
  try {
    mkdirSync(join(tmp, "ws"));
    const denied = (await hashFile("/usr/bin/id")).digest;
    const p = makePolicy("denylist", [], [denied]);
    writeFileSync(join(tmp, "policy.json"), canonicalize(p));
    const out = join(tmp, "out");
    const r = await sbxRun([
      "--workspace",
      join(tmp, "ws"),
      "--exec-policy",
      join(tmp, "policy.json"),
      "--out",
      out,
      "--json",
      "--",
      "/bin/sh",
      "-c",
      "/usr/bin/true && echo allowed-ran; /usr/bin/id; echo id-status=$?",
    ]);
    assert.equal(r.code, 0, r.err);
    const stdout = readFileSync(join(out, "stdout"), "utf8");
    assert.match(stdout, /allowed-ran\nid-status=126\n/);
    const s = JSON.parse(r.out) as { level: string; gate: { held: boolean; marked: number } | null };
    assert.equal(s.gate?.held, true);
    const journal = JSON.parse(readFileSync(join(out, "journal.json"), "utf8")) as {
      events: { type: string; digest?: string; allowed?: boolean; rule?: string; path?: string }[];
    };
    const decisions = journal.events.filter((e) => e.type === "exec.decision");
    assert.ok(decisions.some((e) => e.digest === denied && e.allowed === false && e.rule === "denied"));
    assert.ok(
      decisions.some((e) => e.path === "/usr/bin/true" && e.allowed === true),
      JSON.stringify(decisions),
    );
    const env = JSON.parse(readFileSync(join(out, "attestation.json"), "utf8")) as Envelope;
    const pred = verifyAttestation(env).predicate;
    assert.equal(pred.exec_policy, policyAddress(p));
    // No run head (S5), so the gate's S6 cannot be stated: S4 is what was provided, and stated.
    assert.equal(pred.level, "S4");
    assert.equal(s.level, "S4");
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("sbx run --exec-policy: contradictions are usage errors", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "sbx-run-gate-"));
  try {
    writeFileSync(join(tmp, "policy.json"), canonicalize(makePolicy("denylist")));
    const file = join(tmp, "policy.json");
    for (const argv of [
      ["--unsandboxed", "--exec-policy", file, "--", "true"],
      ["--exec-policy", file, "--policy", addressOf({ other: 1 }), "--", "true"],
      ["--steward", "did:key:z6Mk", "--", "true"],
    ])
      assert.equal((await sbxRun(argv)).code, 2, argv.join(" "));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("sbx run without --workspace removes the fresh workspace it made, however deep the unit wrote", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "sbx-run-cli-"));
  chmodSync(tmp, 0o1777); // a temporary folder as /tmp is: the sandbox's uid reaches what is made in it
  const before = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  try {
    // 30 levels of 200-byte names: a tree past PATH_MAX, which a path-based removal refuses.
    const deep = `perl -e 'for (1 .. 30) { mkdir "d" x 200 or die; chdir "d" x 200 or die }'; echo made`;
    const r = await sbxRun(["--json", "--", "/bin/sh", "-c", deep]);
    assert.equal(r.code, 0, r.err);
    assert.equal((JSON.parse(r.out) as { workspace: unknown }).workspace, null);
    // (The sandbox's shared /etc and seccomp folders, sbx-system-*, last until this process exits.)
    const left = readdirSync(tmp).filter((n) => !n.startsWith("sbx-system-"));
    assert.deepEqual(left, [], "no workspace is left in the temporary folder");
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(tmp, { recursive: true, force: true });
  }
});
