// runGranted (host/src/run/granted.ts), the one run function under grants (sbx run --grant, the
// standing driver's runs): the grant's exec resources gate the run even when the caller gives no
// gate of its own (fail closed), grants_id is the grant's, and the interval is debited once.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, generateKeyPair, payloadOf, type KeyPair } from "@sbx/wire";
import { issueGrant, randomNonce } from "@sbx/jcp-grant/grant";
import { candidateLoaders } from "../../src/gate/index.ts";
import { openGrantRun } from "../../src/grants/index.ts";
import { readLedger } from "../../src/ledger/index.ts";
import { digestFile, runGranted } from "../../src/run/index.ts";

const [root, alice, host] = [0, 1, 2].map(() => generateKeyPair()) as [KeyPair, KeyPair, KeyPair];
const NONE = addressOf({});

test("a grant naming the programs the unit may run gates it, with no gate given; debited once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-granted-"));
  try {
    const sh = digestFile(realpathSync("/bin/sh"));
    const loaders = [...new Set(candidateLoaders().map(digestFile))];
    const now = Date.now();
    const chain = [
      issueGrant(root, {
        holder: alice.did,
        // (Every file executed counts, the ELF interpreter too: §5.5.1.)
        resources: [`/exec/${sh}`, ...loaders.map((l) => `/exec/${l}`), "/fs/work/**"].sort(),
        actions: ["exec", "read", "write"],
        uj: "100000000",
        calls: 10,
        nbf_ms: now - 60_000,
        exp_ms: now + 3_600_000,
        depth: 0,
        nonce: randomNonce(),
      }),
    ];
    const ledger = join(dir, "ledger");
    const sandbox = { workspace: mkdtempSync(join(dir, "work-")) };
    const grant = openGrantRun(
      { chains: [chain], roots: [root.did], hosts: [host.did], ledger },
      host,
      sandbox,
    );
    // sh is granted; the `true` it execs is not.
    const argv = ["sh", "-c", "/bin/true; echo status $?"];
    const out: Buffer[] = [];
    const { result, debit } = await runGranted(
      {
        argv,
        hostKey: host,
        unitId: addressOf({ granted_test: "unit" }),
        unit: { granted_test: "unit" },
        grantsId: NONE,
        manifest: NONE,
        policy: NONE,
        sandbox,
        timeoutMs: 20_000,
        onOutput: (_s, d) => out.push(d),
      },
      grant,
    );
    assert.equal(result.gate?.held, true, "the run was gated by the grant alone");
    const decisions = result.journal.events.filter((e) => e.type === "exec.decision");
    assert.ok(
      decisions.some((e) => e.digest === sh && e.allowed),
      "sh, granted, was allowed",
    );
    assert.ok(
      decisions.some((e) => !e.allowed),
      "a program the grant does not name was refused",
    );
    assert.match(Buffer.concat(out).toString(), /\/bin\/true: Operation not permitted\nstatus 126\n$/);
    const att = payloadOf(result.attestation) as { predicate: { grants_id: string; exec_policy: string } };
    assert.equal(att.predicate.grants_id, grant.grantsId, "grants_id is the grant's");
    assert.equal(att.predicate.exec_policy, decisions[0]!.policy, "the gate's policy is attested");
    assert.notEqual(att.predicate.exec_policy, NONE);
    assert.equal(debit?.spent_uj, result.receipt.receipt.total_uj);
    assert.equal(readLedger(ledger).receipts.length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("runGranted without a grant is runUnit: no gate, no debit; a grant needs a sandbox (RangeError)", async () => {
  const { result, debit } = await runGranted({
    argv: ["true"],
    hostKey: host,
    unitId: addressOf({ granted_test: "plain" }),
    unit: { granted_test: "plain" },
    grantsId: NONE,
    manifest: NONE,
    policy: NONE,
  });
  assert.deepEqual(result.outcome, { status: "exited", exit_code: 0 });
  assert.equal(result.gate, null);
  assert.equal(debit, undefined);
  const fake = {} as Parameters<typeof runGranted>[1];
  await assert.rejects(
    runGranted(
      { argv: ["true"], hostKey: host, unitId: NONE, grantsId: NONE, manifest: NONE, policy: NONE },
      fake,
    ),
    RangeError,
  );
});
