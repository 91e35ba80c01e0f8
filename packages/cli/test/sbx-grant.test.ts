// `sbx run --grant` (jcp §4.2–§4.4 governing a run): the budget enforced live (a CPU-burning unit
// under a 2 J budget is stopped with BudgetExhausted within the bound of jcp §4.3), the interval
// debited on the ledger citing its attestation and energy receipt, and the run's attested energy
// equal to what `jcp verify --ledger` says was spent; the leaf's /fs resources the only host paths
// reachable, no network, and a run refused when the grants do not give it its workspace.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, envelopeAddress, payloadOf, type Envelope } from "@sbx/wire";
import { grantsId } from "@sbx/jcp-grant/grant";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { makePolicy, policyAddress } from "@sbx/sandbox-attest/execpolicy";
import { hashFile } from "@sbx/host/gate";
import { realpathSync } from "node:fs";
import { runCli } from "../src/main.ts";

async function cli(tool: "sbx" | "jcp", argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(tool, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

interface Setup {
  readonly dir: string;
  readonly p: (n: string) => string;
  readonly runArgs: string[];
}

async function setup(resources: [string, string[]][], uj: string): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "sbx-grant-"));
  const p = (n: string) => join(dir, n);
  for (const k of ["root", "alice", "host"])
    assert.equal((await cli("jcp", ["keygen", "--out", p(`${k}.key`)])).code, 0);
  const flags = resources.flatMap(([r]) => ["--resource", r]);
  const actions = [...new Set(resources.flatMap(([, a]) => a))].sort().flatMap((a) => ["--action", a]);
  const issued = await cli("jcp", [
    ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), ...flags, ...actions],
    ...["--uj", uj, "--depth", "0", "--ttl", "86400000", "--out", p("alice.chain")],
  ]);
  assert.equal(issued.code, 0, issued.err);
  mkdirSync(p("ws"));
  const runArgs = [
    ...["run", "--key", p("host.key"), "--grant", p("alice.chain"), "--trust", p("root.key")],
    ...["--ledger", p("ledger"), "--workspace", p("ws")],
  ];
  return { dir, p, runArgs };
}

interface RunJson {
  outcome: { status: string; stopped?: string };
  energy: { total_uj: string };
  attestation: string;
  receipt: string;
  grant: {
    spent_uj: string;
    receipt: Envelope;
    period_ms: number;
    max_period_uj: string;
    remaining_uj: string;
    overshoot_uj: string;
  };
}

test("a CPU-burning unit under a 2 J budget is stopped with BudgetExhausted within budget + one period", async () => {
  const s = await setup([["/fs/work/**", ["read", "write"]]], "2J");
  try {
    const t0 = Date.now();
    const r = await cli("sbx", [
      ...s.runArgs,
      "--json",
      "--out",
      s.p("out"),
      "--",
      "sh",
      "-c",
      "while :; do :; done",
    ]);
    const wall = Date.now() - t0;
    assert.equal(r.code, 1, r.err);
    const j = JSON.parse(r.out) as RunJson;
    assert.equal(j.outcome.stopped, "BudgetExhausted");
    // The interval is attested, its outcome says why, and its energy is what the ledger debited.
    const att = JSON.parse(readFileSync(s.p("out/attestation.json"), "utf8")) as Envelope;
    const pred = verifyAttestation(att).predicate;
    assert.equal(pred.outcome.status === "spawn_failed" ? null : pred.outcome.stopped, "BudgetExhausted");
    assert.equal(pred.energy.total_uj, j.energy.total_uj);
    const spent = BigInt(j.energy.total_uj);
    const bound = 2_000_000n + BigInt(j.grant.max_period_uj);
    assert.ok(spent <= bound, `spent ${spent} µJ, bound ${bound} µJ`);
    // Stopped no earlier than the rule allows (§4.5: E + 2Δ > R, Δ at most the largest period's
    // growth): a timer delayed by a busy machine makes Δ large and the stop early, never arbitrary.
    const maxPeriod = BigInt(j.grant.max_period_uj);
    assert.ok(
      spent + 2n * maxPeriod > 2_000_000n,
      `a burner stopped at ${spent} µJ with Δ ≤ ${maxPeriod} µJ, before E + 2Δ passed 2 J`,
    );
    // The debit cites the interval's attestation and energy receipt by address.
    const debit = payloadOf(j.grant.receipt) as {
      uj: string;
      overshoot_uj?: string;
      cites: { attestation: string; energy: string };
    };
    // jcp §4.3 "Overshoot": the debit is the energy up to the budget, the rest recorded beside it.
    assert.equal(BigInt(debit.uj) + BigInt(debit.overshoot_uj ?? "0"), spent);
    assert.deepEqual({ ...debit.cites }, { attestation: envelopeAddress(att), energy: j.receipt });
    // jcp verify --ledger replays the ledger whole and agrees with the run.
    const v = await cli("jcp", [
      ...["verify", s.p("alice.chain"), "--trust", s.p("root.key"), "--ledger", s.p("ledger")],
      ...["--host", s.p("host.key"), "--json"],
    ]);
    assert.equal(v.code, 0, v.err);
    const led = (JSON.parse(v.out) as { ledger: { receipts: number; spent_uj: string } }).ledger;
    assert.deepEqual(led, { ...led, receipts: 1, spent_uj: debit.uj });
    console.log(
      `budget 2000000 µJ: spent ${spent} µJ (${Number(spent) / 20_000}% of budget), period ${j.grant.period_ms} ms, one period's most ${j.grant.max_period_uj} µJ, bound ${bound} µJ, wall ${wall} ms`,
    );
    // Nothing left to spend beyond what remains: a second run starts only while budget remains.
    assert.equal(BigInt(j.grant.remaining_uj), 2_000_000n - BigInt(debit.uj));
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("under /fs/work/** only, no other host path is readable or writable and nothing is reachable", async () => {
  const host = mkdtempSync("/var/tmp/sbx-grant-host-");
  chmodSync(host, 0o755);
  writeFileSync(join(host, "secret"), "secret\n", { mode: 0o644 });
  const s = await setup([["/fs/work/**", ["read", "write"]]], "100J");
  const server = createServer((c) => c.end("hello\n"));
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  try {
    const probe = [
      `cat ${host}/secret && echo READ`,
      `echo x > ${host}/new && echo WROTE`,
      `(echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo CONNECTED`,
      "echo ok > /work/mine && cat /work/mine",
    ].join("; ");
    const r = await cli("sbx", [...s.runArgs, "--json", "--", "bash", "-c", probe]);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /READ|WROTE|CONNECTED/);
    assert.match(r.err, /ok/); // the workspace is writable
    assert.equal(connections, 0);
    assert.equal(readFileSync(s.p("ws/mine"), "utf8"), "ok\n");
    assert.equal((JSON.parse(r.out) as { sandbox: { network: unknown } }).sandbox.network, "none");
  } finally {
    server.close();
    rmSync(s.dir, { recursive: true, force: true });
    rmSync(host, { recursive: true, force: true });
  }
});

test("a granted host path is bound read-only with read, and nothing beside it", async () => {
  const host = mkdtempSync("/var/tmp/sbx-grant-host-");
  chmodSync(host, 0o755);
  for (const d of ["ro", "other"]) {
    mkdirSync(join(host, d), { mode: 0o777 });
    chmodSync(join(host, d), 0o777);
    writeFileSync(join(host, d, "f"), `${d}\n`, { mode: 0o644 });
  }
  const s = await setup(
    [
      [`/fs${host}/ro/**`, ["read"]],
      ["/fs/work/**", ["read"]],
    ],
    "100J",
  );
  try {
    const probe = [
      `cat ${host}/ro/f && echo RO-READ`,
      `(echo x > ${host}/ro/new) 2>/dev/null && echo RO-WROTE`,
      `cat ${host}/other/f 2>/dev/null && echo OTHER-READ`,
      "true",
    ].join("; ");
    const r = await cli("sbx", [...s.runArgs, "--json", "--", "bash", "-c", probe]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err, "ro\nRO-READ");
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
    rmSync(host, { recursive: true, force: true });
  }
});

// sandbox-attest §5.3 item 2, §5.6 item 2: a host folder granted `write` would be a writable place
// the kernel does not bound (only the workspace, /tmp and /dev/shm are): refused before anything
// runs or is debited, each such resource named.
test("a granted host path with write is refused DiskLimitUnavailable, naming it, before anything runs", async () => {
  const host = mkdtempSync("/var/tmp/sbx-grant-host-");
  chmodSync(host, 0o777);
  const rw = `/fs${host}/**`;
  const s = await setup(
    [
      [rw, ["write"]],
      ["/fs/work/**", ["write"]],
    ],
    "100J",
  );
  try {
    const fill = `echo ran > /work/ran; head -c 1048576 /dev/zero > ${host}/fill`;
    const r = await cli("sbx", [...s.runArgs, "--", "sh", "-c", fill]);
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /DiskLimitUnavailable/);
    assert.ok(r.err.includes(rw), r.err);
    assert.equal(existsSync(s.p("ws/ran")), false, "nothing ran");
    assert.equal(existsSync(join(host, "fill")), false, "nothing was written on the host");
    assert.equal(existsSync(s.p("ledger")), false, "nothing was debited");
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
    rmSync(host, { recursive: true, force: true });
  }
});

test("a run whose grants do not give it its workspace, or no budget, is refused and nothing runs", async () => {
  const s = await setup([["/fs/data/**", ["read"]]], "1J");
  try {
    const r = await cli("sbx", [...s.runArgs, "--", "sh", "-c", "echo ran > /work/ran"]);
    assert.equal(r.code, 1);
    assert.match(r.err, /GrantsInsufficient/);
    const noTrust = await cli("sbx", [
      "run",
      "--grant",
      s.p("alice.chain"),
      "--ledger",
      s.p("l"),
      "--",
      "true",
    ]);
    assert.equal(noTrust.code, 2);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("with a grant for one loopback port the unit reaches that port and nothing else", async () => {
  const hits = new Map<number, number>();
  const servers = [0, 1].map(() => createServer((c) => c.end("hello\n")));
  const ports: number[] = [];
  for (const s of servers) {
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const port = (s.address() as { port: number }).port;
    ports.push(port);
    s.on("connection", () => hits.set(port, (hits.get(port) ?? 0) + 1));
  }
  const [granted, other] = ports as [number, number];
  const s = await setup(
    [
      [`/net/127.0.0.1/${granted}`, ["connect"]],
      ["/fs/work/**", ["read", "write"]],
    ],
    "100J",
  );
  try {
    const probe = [
      `exec 5<>/dev/tcp/127.0.0.1/${granted} && head -1 <&5 && echo GRANTED`,
      `(exec 6<>/dev/tcp/127.0.0.1/${other}) 2>/dev/null && echo OTHER`,
      `(exec 7<>/dev/tcp/10.0.0.1/80) 2>/dev/null && echo OUTSIDE`,
      "true",
    ].join("; ");
    const r = await cli("sbx", [...s.runArgs, "--json", "--", "bash", "-c", probe]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err, "hello\nGRANTED");
    assert.equal(hits.get(granted), 1);
    // What was provided is stated: that one port relayed, not "none"; the level is the one a
    // sandbox whose network its grants name provides (§5.2 item 1), no other.
    const j = JSON.parse(r.out) as { sandbox: { network: unknown }; level: string };
    assert.deepEqual(j.sandbox.network, { loopback: [granted] });
    assert.equal(j.level, "S4");
    assert.equal(hits.get(other), undefined);
  } finally {
    for (const x of servers) x.close();
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("an issuer's amendment lowering the budget stops a running unit at the next period", async () => {
  const s = await setup([["/fs/work/**", ["read", "write"]]], "100J");
  try {
    const log = s.p("alice-log");
    // The holder checkpoints (jcp §4.7: an amendment answers the latest checkpoint).
    const state = `blake3:${"0".repeat(64)}`;
    const cp = await cli("jcp", [
      ...["checkpoint", "--key", s.p("alice.key"), "--chain", s.p("alice.chain"), "--log", log],
      ...["--state", state, "--spent-uj", "0"],
    ]);
    assert.equal(cp.code, 0, cp.err);
    const script = "echo up > /work/up; sleep 1; while :; do :; done";
    const t0 = Date.now();
    const running = cli("sbx", [...s.runArgs, "--amendments", log, "--json", "--", "sh", "-c", script]);
    while (!existsSync(s.p("ws/up"))) await new Promise((r) => setTimeout(r, 20));
    const amend = ["amend", "--key", s.p("root.key"), "--chain", s.p("alice.chain"), "--log", log];
    const a = await cli("jcp", [...amend, "--uj", "1J"]);
    assert.equal(a.code, 0, a.err);
    const r = await running;
    const wall = Date.now() - t0;
    assert.equal(r.code, 1, r.err);
    const j = JSON.parse(r.out) as RunJson;
    assert.equal(j.outcome.stopped, "BudgetExhausted");
    const spent = BigInt(j.energy.total_uj);
    // Under its original 100 J the busy loop would have run for half a minute; the amended 1 J stops it.
    assert.ok(spent <= 1_000_000n + BigInt(j.grant.max_period_uj), `spent ${spent} µJ under an amended 1 J`);
    // Past the amended budget, what is left is 0 and the rest is the recorded overshoot (jcp §4.3).
    const within = spent < 1_000_000n ? spent : 1_000_000n;
    assert.equal(BigInt(j.grant.remaining_uj), 1_000_000n - within);
    assert.equal(BigInt(j.grant.overshoot_uj), spent - within);
    console.log(`amended to 1 J while running: stopped having spent ${spent} µJ after ${wall} ms`);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("a grant naming /exec/<digest> resources runs only those programs (the exec gate, allowlist)", async () => {
  const allowed = await Promise.all(
    ["/bin/sh", "/lib64/ld-linux-x86-64.so.2", "/usr/bin/true"].map(
      async (f) => (await hashFile(realpathSync(f))).digest,
    ),
  );
  const denied = (await hashFile("/usr/bin/id")).digest;
  const s = await setup(
    [["/fs/work/**", ["read", "write"]], ...allowed.map((d): [string, string[]] => [`/exec/${d}`, ["exec"]])],
    "100J",
  );
  try {
    const r = await cli("sbx", [
      ...s.runArgs,
      ...["--json", "--out", s.p("out"), "--", "/bin/sh", "-c"],
      "/usr/bin/true && echo true-ran; /usr/bin/id; echo id-status=$?",
    ]);
    assert.equal(r.code, 0, r.err);
    assert.match(readFileSync(s.p("out/stdout"), "utf8"), /true-ran\nid-status=126\n/);
    const j = JSON.parse(r.out) as { gate: { held: boolean } | null };
    assert.equal(j.gate?.held, true);
    // The policy attested is the grant's allowlist, and the refusal of id is journaled.
    const att = JSON.parse(readFileSync(s.p("out/attestation.json"), "utf8")) as Envelope;
    assert.equal(
      verifyAttestation(att).predicate.exec_policy,
      policyAddress(makePolicy("allowlist", allowed)),
    );
    const journal = JSON.parse(readFileSync(s.p("out/journal.json"), "utf8")) as {
      events: { type: string; digest?: string; allowed?: boolean }[];
    };
    assert.ok(
      journal.events.some((e) => e.type === "exec.decision" && e.digest === denied && e.allowed === false),
    );
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
  }
});

test("a grant set of two chains: grants_id binds both leaves, each governs its own resources, the energy is split in order", async () => {
  const host = mkdtempSync("/var/tmp/sbx-grant-host-");
  chmodSync(host, 0o755);
  writeFileSync(join(host, "data"), "from-B\n", { mode: 0o644 });
  // Chain A: the workspace, 0.05 J. Chain B: a host folder read-only, 100 J.
  const s = await setup([["/fs/work/**", ["read", "write"]]], "50000");
  try {
    const b = await cli("jcp", [
      ...["issue", "--key", s.p("root.key"), "--holder", s.p("alice.key"), "--resource", `/fs${host}/**`],
      ...["--action", "read", "--uj", "100J", "--depth", "0", "--ttl", "86400000", "--out", s.p("b.chain")],
    ]);
    assert.equal(b.code, 0, b.err);
    const chainA = JSON.parse(readFileSync(s.p("alice.chain"), "utf8")) as Envelope[];
    const chainB = JSON.parse(readFileSync(s.p("b.chain"), "utf8")) as Envelope[];
    writeFileSync(s.p("set.json"), JSON.stringify([chainA, chainB]));
    const args = s.runArgs.map((a) => (a === s.p("alice.chain") ? s.p("set.json") : a));
    const script = `cat ${host}/data; echo w > /work/w && echo wrote; (echo x > ${host}/new) 2>/dev/null && echo HOSTWRITE; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done`;
    const r = await cli("sbx", [...args, "--json", "--out", s.p("out"), "--", "sh", "-c", script]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err, "from-B\nwrote");
    const j = JSON.parse(r.out) as RunJson & { grant: { shares: { chain: number; uj: string }[] } };
    const leafA = addressOf(payloadOf(chainA.at(-1)!));
    const leafB = addressOf(payloadOf(chainB.at(-1)!));
    const att = JSON.parse(readFileSync(s.p("out/attestation.json"), "utf8")) as Envelope;
    assert.equal(verifyAttestation(att).predicate.grants_id, grantsId([leafA, leafB]));
    const total = BigInt(j.energy.total_uj);
    assert.ok(total > 50_000n, `the loop drew ${total} µJ`);
    assert.deepEqual(
      j.grant.shares.map((x) => [x.chain, x.uj]),
      [
        [1, "50000"],
        [2, (total - 50_000n).toString()],
      ],
    );
    // jcp verify on each chain agrees: A spent its whole budget, B the rest; together the run's energy.
    const spentOn = async (chain: string) => {
      const v = await cli("jcp", [
        ...[
          "verify",
          chain,
          "--trust",
          s.p("root.key"),
          "--ledger",
          s.p("ledger"),
          "--host",
          s.p("host.key"),
        ],
        "--json",
      ]);
      assert.equal(v.code, 0, v.err);
      return BigInt((JSON.parse(v.out) as { ledger: { spent_uj: string } }).ledger.spent_uj);
    };
    const a = await spentOn(s.p("alice.chain"));
    const bb = await spentOn(s.p("b.chain"));
    assert.equal(a, 50_000n);
    assert.equal(a + bb, total);
  } finally {
    rmSync(s.dir, { recursive: true, force: true });
    rmSync(host, { recursive: true, force: true });
  }
});
