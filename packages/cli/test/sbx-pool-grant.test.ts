// `sbx pool claim --grant` (issue 17 on a warm-pool claim): the claimed unit runs under a verified
// grant chain, its interval is debited once on the grant's ledger citing its attestation and first
// receipt, whose total includes the claim's warmpool residency, and `jcp verify --ledger` reports
// the same spend as the attested total. A grant the parked sandbox cannot honour is refused before
// anything is claimed.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { addressOf, payloadOf, type Envelope } from "@sbx/wire";
import { openPoolDir } from "@sbx/host/pool";
import { runCli } from "../src/main.ts";

const dir = mkdtempSync(join(tmpdir(), "sbx-pool-grant-"));
const p = (n: string) => join(dir, n);
const store = p("store");
const MANIFEST = "blake3:" + "cd".repeat(32);
after(async () => {
  await cli("sbx", ["pool", "destroy", "--store", store, "--pool", "g", "--key", p("host.key")]);
  rmSync(dir, { recursive: true, force: true });
});

async function cli(tool: "sbx" | "jcp", argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(tool, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

async function issue(name: string, resources: string[], actions = ["read", "write"]): Promise<void> {
  const r = await cli("jcp", [
    ...["issue", "--key", p("root.key"), "--holder", p("alice.key")],
    ...resources.flatMap((x) => ["--resource", x]),
    ...actions.flatMap((a) => ["--action", a]),
    ...["--uj", "100J", "--depth", "0", "--ttl", "86400000"],
    ...["--out", p(name)],
  ]);
  assert.equal(r.code, 0, r.err);
}

const claimArgs = (chain: string) => [
  ...["pool", "claim", "--store", store, "--pool", "g", "--key", p("host.key")],
  ...["--grant", p(chain), "--trust", p("root.key"), "--ledger", p("ledger")],
];

interface ClaimJson {
  claim: { grants: string; accrued_uj: string };
  energy: { total_uj: string; components: { uj: string; source?: string }[] };
  attestation: string;
  receipt: string;
  grant: { spent_uj: string; receipt: Envelope; remaining_uj: string };
}

test("a claim under a grant: one debit of the first receipt's total, residency included, as jcp verify agrees", async () => {
  for (const k of ["root", "alice", "host"])
    assert.equal((await cli("jcp", ["keygen", "--out", p(`${k}.key`)])).code, 0);
  mkdirSync(store);
  const made = await cli("sbx", [
    ...["pool", "create", "--store", store, "--pool", "g", "--key", p("host.key")],
    ...["--manifest", MANIFEST, "-n", "2"],
  ]);
  assert.equal(made.code, 0, made.err);
  await issue("work.chain", ["/fs/work/**"]);
  // read only: a host folder granted write is refused on any front door (DiskLimitUnavailable).
  await issue("wide.chain", ["/fs/work/**", "/fs/var/tmp/pool-grant-data/**"], ["read"]);
  const pool = join(store, "pools", "g");
  const claimed = () => openPoolDir(pool).payloads.filter((e) => e.kind === "claimed").length;

  // A grant that binds a host path the parked sandbox does not have: refused before the claim.
  const wide = await cli("sbx", [...claimArgs("wide.chain"), "--json", "--", "true"]);
  assert.equal(wide.code, 2, wide.err);
  assert.equal(claimed(), 0, "nothing was claimed");
  // --grant computes grants_id: --grants with it is a usage error, before the claim.
  const both = await cli("sbx", [...claimArgs("work.chain"), "--grants", addressOf({}), "--", "true"]);
  assert.equal(both.code, 2, both.err);
  assert.equal(claimed(), 0);

  const r = await cli("sbx", [...claimArgs("work.chain"), "--json", "--", "sh", "-c", "echo granted"]);
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out) as ClaimJson;
  assert.notEqual(j.claim.grants, addressOf({}), "the claim is bound to the grant's grants_id");
  assert.ok(BigInt(j.claim.accrued_uj) > 0n);
  assert.ok(BigInt(j.energy.total_uj) > BigInt(j.claim.accrued_uj), "the total holds residency and the unit");
  // One debit: the receipt's total, citing the interval's attestation and energy receipt.
  const debit = payloadOf(j.grant.receipt) as { uj: string; cites: { attestation: string; energy: string } };
  assert.equal(debit.uj, j.energy.total_uj);
  assert.equal(j.grant.spent_uj, j.energy.total_uj);
  assert.deepEqual({ ...debit.cites }, { attestation: j.attestation, energy: j.receipt });
  assert.equal(BigInt(j.grant.remaining_uj), 100_000_000n - BigInt(j.energy.total_uj));
  // jcp verify replays the ledger and reports the attested total as spent.
  const v = await cli("jcp", [
    ...["verify", p("work.chain"), "--trust", p("root.key"), "--ledger", p("ledger")],
    ...["--host", p("host.key"), "--json"],
  ]);
  assert.equal(v.code, 0, v.err);
  const led = (JSON.parse(v.out) as { ledger: { receipts: number; spent_uj: string } }).ledger;
  assert.deepEqual(led, { ...led, receipts: 1, spent_uj: j.energy.total_uj });
});

test("the live budget counts the claim's charge: a budget below it stops the claimed unit at once", async () => {
  const r0 = await cli("jcp", [
    ...["issue", "--key", p("root.key"), "--holder", p("alice.key"), "--resource", "/fs/work/**"],
    ...["--action", "read", "--action", "write", "--uj", "1000", "--depth", "0", "--ttl", "86400000"],
    ...["--out", p("tiny.chain")],
  ]);
  assert.equal(r0.code, 0, r0.err);
  const t0 = Date.now();
  const r = await cli("sbx", [
    ...["pool", "claim", "--store", store, "--pool", "g", "--key", p("host.key")],
    ...["--grant", p("tiny.chain"), "--trust", p("root.key"), "--ledger", p("tiny-ledger")],
    ...["--json", "--", "sleep", "10"],
  ]);
  console.log(`tiny budget: code ${String(r.code)} in ${String(Date.now() - t0)} ms; ${r.err.slice(0, 300)}`);
  assert.ok(Date.now() - t0 < 8000, "the unit was stopped, not left to sleep");
  assert.match(r.out + r.err, /BudgetExhausted|Overspend/);
});
