// §15.4 claim into a run, in process (host/src/pool/claimrun.ts): what `sbx pool claim -- CMD`
// does, without the binary. A claim runs the unit in the item's parked sandbox, attested, its first
// receipt carrying the residency and its record beside the output; under a grant, one debit of
// that receipt's total; a grant a parked sandbox cannot take is refused before any claim; an item
// of a pool without parked sandboxes is PoolItemNotParked.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { addressOf, generateKeyPair, payloadOf, type KeyPair } from "@sbx/wire";
import { issueGrant, randomNonce } from "@sbx/jcp-grant/grant";
import { makeUnit } from "@sbx/sandbox-attest/unit";
import {
  CLAIM_WORKSPACE,
  checkClaimGrant,
  claimAndRun,
  createPoolDir,
  destroyPoolDir,
  folderLedger,
  openPoolDir,
  poolPaths,
} from "../../src/pool/index.ts";
import { openGrantRun } from "../../src/grants/index.ts";
import { readLedger } from "../../src/ledger/index.ts";

const [root, alice, key] = [0, 1, 2].map(() => generateKeyPair()) as [KeyPair, KeyPair, KeyPair];
const manifest = addressOf({ pool: "claimrun-test" });
const dir = mkdtempSync(join(tmpdir(), "sbx-claimrun-"));
const pool = join(dir, "pool");
const plain = join(dir, "plain");
after(async () => {
  for (const d of [pool, plain]) if (existsSync(poolPaths(d).descriptor)) await destroyPoolDir(d, key);
  rmSync(dir, { recursive: true, force: true });
});
const claims = (d: string) => openPoolDir(d).payloads.filter((e) => e.kind === "claimed").length;

/** A grant chain of one root grant to alice over `resources`, 100 J. */
function grantOver(resources: string[], actions = ["read", "write"]) {
  const now = Date.now();
  const chain = [
    issueGrant(root, {
      holder: alice.did,
      resources: [...resources].sort(),
      actions,
      uj: "100000000",
      calls: 100,
      nbf_ms: now - 60_000,
      exp_ms: now + 3_600_000,
      depth: 0,
      nonce: randomNonce(),
    }),
  ];
  const terms = { chains: [chain], roots: [root.did], hosts: [key.did], ledger: join(dir, "ledger") };
  return openGrantRun(terms, key, { workspace: CLAIM_WORKSPACE });
}

test("a claim runs the unit in the parked sandbox: attested, residency in its first receipt, record kept", async () => {
  await createPoolDir(pool, { name: "claimrun", manifest, size: 3, key, parked: {} });
  const out: Buffer[] = [];
  const argv = ["sh", "-c", "echo claimed; echo x > /work/mark"];
  const r = await claimAndRun(folderLedger(pool), pool, {
    argv,
    hostKey: key,
    timeoutMs: 20_000,
    outputDir: join(dir, "out"),
    onOutput: (_s, d) => out.push(d),
  });
  assert.deepEqual(r.result.outcome, { status: "exited", exit_code: 0 });
  assert.equal(Buffer.concat(out).toString(), "claimed\n");
  assert.equal(r.unitId, addressOf(makeUnit({ argv, manifest, level: "S4" })));
  assert.equal(r.claimed.claim.unit, r.unitId, "the claim names the unit that ran");
  assert.equal(r.claimed.claim.grants, addressOf({}), "no grant: grants_id is that of {}");
  const sources = r.result.receipt.receipt.components.map((c) => c.domain);
  assert.ok(sources.includes("warmpool"), `the first receipt carries the residency: ${sources.join(",")}`);
  assert.equal(readFileSync(join(r.claimed.workspace, "mark"), "utf8"), "x\n");
  const claim = JSON.parse(readFileSync(join(dir, "out/claim.json"), "utf8")) as { item: string };
  assert.equal(claim.item, r.claimed.claim.item);
  assert.ok(existsSync(join(dir, "out/attestation.json")));
  assert.equal(r.debit, undefined);
});

test("under a grant: one debit of the first receipt's total, residency included", async () => {
  const grant = grantOver(["/fs/work/**"]);
  await checkClaimGrant(grant);
  const r = await claimAndRun(folderLedger(pool), pool, {
    argv: ["true"],
    hostKey: key,
    grant,
    timeoutMs: 20_000,
  });
  assert.equal(r.claimed.claim.grants, grant.grantsId);
  const total = r.result.receipt.receipt.total_uj;
  assert.ok(BigInt(total) > BigInt(r.claimed.claim.accrued_uj));
  assert.equal(r.debit?.spent_uj, total);
  const debits = readLedger(join(dir, "ledger")).receipts.map((x) => payloadOf(x) as { uj: string });
  assert.deepEqual(
    debits.map((d) => d.uj),
    [total],
  );
});

test("a grant a parked sandbox cannot take is PoolGrantUnsupported before any claim", async () => {
  const before = claims(pool);
  // A host folder beyond the workspace: writable, refused before any pool is asked (§5.3 item 2);
  // read-only, a bind the parked sandbox was not made with.
  assert.throws(() => grantOver(["/fs/work/**", "/fs/var/tmp/claimrun-data/**"]), {
    name: "HostError",
    code: "DiskLimitUnavailable",
  });
  const wide = grantOver(["/fs/work/**", "/fs/var/tmp/claimrun-data/**"], ["read"]);
  await assert.rejects(checkClaimGrant(wide), { name: "HostError", code: "PoolGrantUnsupported" });
  const port = grantOver(["/fs/work/**", "/net/127.0.0.1/9"], ["connect", "read", "write"]);
  await assert.rejects(checkClaimGrant(port), { name: "HostError", code: "PoolGrantUnsupported" });
  const readOnly = grantOver(["/fs/work/**"], ["read"]);
  await assert.rejects(checkClaimGrant(readOnly), { name: "HostError", code: "PoolGrantUnsupported" });
  assert.equal(claims(pool), before, "nothing was claimed");
});

test("an item of a pool without parked sandboxes is PoolItemNotParked", async () => {
  await createPoolDir(plain, { name: "plain", manifest, size: 1, key });
  await assert.rejects(claimAndRun(folderLedger(plain), plain, { argv: ["true"], hostKey: key }), {
    name: "HostError",
    code: "PoolItemNotParked",
  });
});
