// Trust is explicit: every verify command refuses without a trusted key (exit 2, NoTrust) unless
// --any-signer is given, which says UNTRUSTED and names the signers; a trusted key is given as a
// did:key or a key file; and every signature on every object a record references is checked (a
// corrupted signature on a stored energy receipt makes the record INVALID).
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  addressOf,
  canonicalBytes,
  digestBytes,
  fromBase64,
  signPayload,
  testKey,
  toBase64,
  utf8,
} from "@sbx/wire";
import { signAttestation } from "@sbx/sandbox-attest/attestation";
import { makeReceipt, measure, startEnergyChain, weakestProvenance } from "@sbx/sandbox-attest/energy";
import { FileStore } from "@sbx/host/store";
import { runCli, type Tool } from "../src/main.ts";
import { publicKeyPem } from "@sbx/host/keys";

async function cli(tool: Tool, argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(tool, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

const HOST = testKey("trust-host");
const OTHER = testKey("trust-other");

/** A closed run of one executed interval whose energy receipt is a signed envelope in the store. */
async function signedReceiptRun(dir: string) {
  const store = FileStore.open(join(dir, "store"), { create: true });
  // The attestation's subject names the unit descriptor itself (§7.1); any JSON object serves here.
  const unitDescriptor = { unit: "trust-unit" };
  const unit = addressOf(unitDescriptor);
  const grants = digestBytes(utf8("trust-grants"));
  const manifest = await store.putObject(canonicalBytes({ image: "debian@sha256:" + "1".repeat(64) }));
  const components = [measure("cpu", "test counter", 1234n)];
  const made = makeReceipt(
    startEnergyChain(unit, grants),
    { start_ms: 1000, end_ms: 1100, components, absent: [] },
    HOST,
  );
  const receipt = await store.putSigned(made.envelope);
  assert.equal(receipt, addressOf(made.receipt));
  const id = await store.createRecord(unit, grants);
  const att = await store.putSigned(
    signAttestation(
      {
        unit_id: unit,
        grants_id: grants,
        manifest,
        exec_policy: addressOf({}),
        energy: { receipt, total_uj: made.receipt.total_uj, provenance: weakestProvenance(components) },
        journal: { root: digestBytes(utf8("journal")), events: 1 },
        outcome: { status: "exited", exit_code: 0 },
        interval: { start_ms: 1000, end_ms: 1100 },
        level: "S0",
        run_head: id,
      },
      HOST,
      unitDescriptor,
    ),
  );
  let head = await store.appendSegment(id, id, { kind: "executed", attestation: att });
  head = await store.appendSegment(id, head, { kind: "closed", at_ms: 2000, outcome: "completed" });
  return { store, recordPath: store.recordPath(id), receipt, head };
}

test("sbx verify: no trust is a usage error; --trust did:key or key file; --any-signer says UNTRUSTED", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-trust-"));
  try {
    const run = await signedReceiptRun(dir);
    const none = await cli("sbx", ["verify", run.recordPath]);
    assert.equal(none.code, 2);
    assert.match(none.err, /^sbx verify: NoTrust: /);
    assert.equal(none.err.split("\n").length, 1, "one line, no help text after the error");
    assert.doesNotMatch(none.out, /VALID/);

    const ok = await cli("sbx", ["verify", run.recordPath, "--trust", HOST.did]);
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /verdict: VALID/);
    assert.match(ok.out, new RegExp(`signers: ${HOST.did}`));

    const pub = join(dir, "host.pub.pem");
    writeFileSync(pub, publicKeyPem(HOST.publicKey));
    assert.equal((await cli("sbx", ["verify", run.recordPath, "--trust", pub])).code, 0);

    const other = await cli("sbx", ["verify", run.recordPath, "--trust", OTHER.did, "--json"]);
    assert.equal(other.code, 1);
    assert.equal((JSON.parse(other.out) as { error: { code: string } }).error.code, "HostMismatch");

    const any = await cli("sbx", ["verify", run.recordPath, "--any-signer"]);
    assert.equal(any.code, 0, any.err);
    assert.match(any.out, /verdict: UNTRUSTED/);
    assert.doesNotMatch(any.out, /verdict: VALID/);
    assert.match(any.out, new RegExp(`signers: ${HOST.did}`));
    const anyJson = JSON.parse(
      (await cli("sbx", ["verify", run.recordPath, "--any-signer", "--json"])).out,
    ) as {
      trusted: boolean;
      signers: string[];
    };
    assert.equal(anyJson.trusted, false);
    assert.deepEqual(anyJson.signers, [HOST.did]);

    const both = await cli("sbx", ["verify", run.recordPath, "--any-signer", "--trust", HOST.did]);
    assert.equal(both.code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sbx verify: a corrupted signature on a stored energy receipt makes the record INVALID", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-trust-"));
  try {
    const run = await signedReceiptRun(dir);
    const path = run.store.signedPath(run.receipt);
    const env = JSON.parse(readFileSync(path, "utf8")) as { signatures: { keyid: string; sig: string }[] };
    const sig = fromBase64(env.signatures[0]!.sig)!;
    sig[5]! ^= 0x01;
    env.signatures[0]!.sig = toBase64(sig);
    chmodSync(path, 0o644);
    writeFileSync(path, canonicalBytes(env));
    for (const trust of [["--trust", HOST.did], ["--any-signer"]]) {
      const r = await cli("sbx", ["verify", run.recordPath, ...trust, "--json"]);
      assert.equal(r.code, 1, `${trust.join(" ")}: ${r.out}`);
      assert.equal((JSON.parse(r.out) as { error: { code: string } }).error.code, "BadSignature");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("sbx verify: a stored energy receipt signed by another key than the attestation's host is INVALID", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-trust-"));
  try {
    const run = await signedReceiptRun(dir);
    const path = run.store.signedPath(run.receipt);
    const env = JSON.parse(readFileSync(path, "utf8")) as { payloadType: string; payload: string };
    const resigned = signPayload(
      env.payloadType,
      JSON.parse(Buffer.from(env.payload, "base64").toString()),
      OTHER,
    );
    chmodSync(path, 0o644);
    writeFileSync(path, canonicalBytes(resigned));
    for (const trust of [
      ["--trust", HOST.did],
      ["--trust", HOST.did, "--trust", OTHER.did],
      ["--any-signer"],
    ]) {
      const r = await cli("sbx", ["verify", run.recordPath, ...trust, "--json"]);
      assert.equal(r.code, 1, `${trust.join(" ")}: ${r.out}`);
      assert.equal((JSON.parse(r.out) as { error: { code: string } }).error.code, "UnknownSigner");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every verify command refuses without --trust (exit 2, NoTrust) before reading its inputs", async () => {
  const cases: [Tool, string[]][] = [
    ["sbx", ["verify", "r.runrecord"]],
    ["sbx", ["fleet", "verify", "fleet.json", "proof.json"]],
    ["sbx", ["fleet", "consistency", "old.json", "new.json"]],
    ["sbx", ["pool", "verify", "pooldir"]],
    ["sbx", ["manifest", "verify", "m.json"]],
    ["jcp", ["verify", "c.chain"]],
    ["jcp", ["checkpoint", "verify", "--chain", "c.chain", "--log", "log.json"]],
    ["jcp", ["standing", "verify", "--policy", "p.json", "--held", "c.chain", "--ledger", "l.json"]],
  ];
  for (const [tool, argv] of cases) {
    const r = await cli(tool, argv);
    assert.equal(r.code, 2, `${tool} ${argv.join(" ")}`);
    assert.match(r.err, /NoTrust: no trusted key given/, `${tool} ${argv.join(" ")}`);
    assert.equal(r.err.split("\n").length, 1, `${tool} ${argv.join(" ")}: one line`);
  }
});
