import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, digestBytes, isWireError, testKey, type Digest, type Json } from "@sbx/wire";
import { verifyAttestation, verifyInterval } from "@sbx/sandbox-attest/attestation";
import { firstLink, linkAfter, stewardDomain, verifyAuditChain } from "@sbx/sandbox-attest/audit";
import { openReceipt, weakestProvenance } from "@sbx/sandbox-attest/energy";
import { verifyJournal } from "@sbx/sandbox-attest/journal";
import { digestFile, resolveProgram, runUnit, type RunUnitOptions } from "../../src/run/index.ts";

const hostKey = testKey("host");
const d = (s: string): Digest => addressOf({ run_test: s });
const base = {
  hostKey,
  unitId: d("unit"),
  unit: { run_test: "unit" },
  grantsId: d("grants"),
  manifest: d("manifest"),
  policy: d("policy"),
} as const;
const run = (argv: string[], extra: Partial<RunUnitOptions> = {}) =>
  runUnit({ ...base, argv, meter: { sampleMs: 20 }, ...extra });

test("a real child process: journaled start, stdio and exit; metered receipt; attestation binding both", async () => {
  const script = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo hello; echo oops >&2; exit 3";
  const r = await run(["sh", "-c", script]);
  assert.deepEqual(r.outcome, { status: "exited", exit_code: 3 });
  assert.equal(r.stdout.toString(), "hello\n");
  assert.equal(r.stderr.toString(), "oops\n");
  const ev = r.journal.events;
  const start = ev[0];
  if (start?.type !== "process.start") return assert.fail("first event is not process.start");
  assert.deepEqual(start.argv, ["sh", "-c", script]);
  assert.equal(start.binary, digestFile(realpathSync("/bin/sh")));
  const chunks = ev.filter((e) => e.type === "stdio.chunk");
  assert.deepEqual(
    chunks.map((c) => [c.stream, c.digest]).sort(),
    [
      ["stderr", digestBytes(Buffer.from("oops\n"))],
      ["stdout", digestBytes(Buffer.from("hello\n"))],
    ].sort(),
  );
  assert.deepEqual(ev[ev.length - 1], {
    type: "process.exit",
    seq: ev.length - 1,
    pid: start.pid,
    code: 3,
    signal: null,
  });
  const head = r.journal.head();
  verifyJournal(ev as unknown as Json[], head as unknown as Json);
  const rec = openReceipt(r.receipt.envelope, { hosts: [hostKey.did] });
  assert.equal(rec.address, r.receiptAddress);
  const v = verifyAttestation(r.attestation, {
    host: hostKey.did,
    unitId: base.unitId,
    grantsId: base.grantsId,
    manifest: base.manifest,
    policy: base.policy,
    receipt: r.receiptAddress,
    totalUj: rec.receipt.total_uj,
    journalRoot: head.root,
    journalEvents: head.size,
    runHead: null,
    auditPrev: null,
  });
  assert.equal(v.address, r.address);
  assert.equal(v.predicate.energy.provenance, weakestProvenance(rec.receipt.components));
  assert.ok(BigInt(rec.receipt.total_uj) > 0n, "a process that ran drew some energy");
  verifyInterval(
    r.attestation,
    { receipt: r.receipt.envelope, events: ev as unknown as Json[] },
    { host: hostKey.did },
  );
  assert.deepEqual(
    { ...v.predicate.interval },
    { start_ms: rec.receipt.start_ms, end_ms: rec.receipt.end_ms },
  );
});

test("output is journaled in fixed-size chunks whatever the pipe delivered", async () => {
  const r = await run(["sh", "-c", "i=0; while [ $i -lt 300 ]; do echo line-$i; i=$((i+1)); done"], {
    chunkBytes: 1000,
  });
  const chunks = r.journal.events.filter((e) => e.type === "stdio.chunk");
  assert.equal(chunks.length, Math.ceil(r.stdout.length / 1000));
  chunks.forEach((c, i) => {
    assert.equal(c.digest, digestBytes(r.stdout.subarray(i * 1000, (i + 1) * 1000)), `chunk ${i}`);
  });
});

test("files written under the watched directory are journaled by digest, unchanged ones are not", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sbx-watch-"));
  writeFileSync(join(dir, "kept.txt"), "same");
  writeFileSync(join(dir, "edited.txt"), "before");
  const r = await run(["sh", "-c", "mkdir -p sub && printf new > sub/new.txt && printf after > edited.txt"], {
    cwd: dir,
    watch: dir,
  });
  const writes = r.journal.events.filter((e) => e.type === "file.write");
  assert.deepEqual(
    writes.map((w) => [w.path, w.digest, w.size]),
    [
      ["edited.txt", digestBytes(Buffer.from("after")), "5"],
      ["sub/new.txt", digestBytes(Buffer.from("new")), "3"],
    ],
  );
  assert.equal(r.journal.events[r.journal.size - 1]?.type, "process.exit");
});

test("stdin is fed to the child and journaled", async () => {
  const r = await run(["cat"], { stdin: Buffer.from("from stdin\n") });
  assert.equal(r.stdout.toString(), "from stdin\n");
  const s = r.journal.events.find((e) => e.type === "stdio.chunk" && e.stream === "stdin");
  assert.equal(s?.type === "stdio.chunk" ? s.digest : null, digestBytes(Buffer.from("from stdin\n")));
});

test("a signal and a timeout are outcomes", async () => {
  const sig = await run(["sh", "-c", "kill -TERM $$"]);
  assert.deepEqual(sig.outcome, { status: "signaled", signal: "SIGTERM" });
  const slow = await run(["sleep", "5"], { timeoutMs: 150 });
  assert.deepEqual(slow.outcome, { status: "signaled", signal: "SIGKILL" });
  assert.ok(verifyAttestation(slow.attestation).predicate.interval.end_ms - slow.interval.start_ms < 4000);
  // A grandchild holding stdout open is killed with its group, so the run ends at the timeout.
  const t0 = Date.now();
  const nested = await run(["sh", "-c", "sleep 30 & sleep 30; echo never"], { timeoutMs: 150 });
  assert.deepEqual(nested.outcome, { status: "signaled", signal: "SIGKILL" });
  assert.ok(Date.now() - t0 < 10_000, "the run ended at its timeout");
});

test("a program that cannot run is attested as spawn_failed with an empty journal", async () => {
  const r = await run(["/nonexistent/tool", "x"]);
  assert.deepEqual(r.outcome, { status: "spawn_failed", reason: "ENOENT" });
  assert.equal(r.journal.size, 0);
  assert.equal(verifyAttestation(r.attestation).predicate.energy.total_uj, "0");
  const plain = join(mkdtempSync(join(tmpdir(), "sbx-run-")), "plain");
  writeFileSync(plain, "#!/bin/sh\n", { mode: 0o644 });
  assert.deepEqual(resolveProgram(plain, "/", undefined), { error: "EACCES" });
});

test("runs chain: the receipt chain continues, the audit chain links, the run head is bound", async () => {
  const domain = stewardDomain(testKey("steward").did);
  const a = await run(["true"], { audit: firstLink(domain) });
  const b = await run(["true"], {
    audit: linkAfter(a.attestation),
    energyChain: a.receipt.state,
    runHead: d("head-1"),
  });
  assert.equal(b.receipt.receipt.seq, 1);
  assert.equal(b.receipt.receipt.prev, a.receipt.state.head);
  assert.equal(
    verifyAttestation(b.attestation, { runHead: d("head-1"), auditPrev: a.address }).address,
    b.address,
  );
  assert.equal(
    verifyAuditChain([a.attestation, b.attestation], { domain, hosts: [hostKey.did] }).head,
    b.address,
  );
});

test("a tampered attestation from a run is refused", async () => {
  const r = await run(["true"]);
  const text = Buffer.from(r.attestation.payload, "base64")
    .toString()
    .replace('"exit_code":0', '"exit_code":1');
  assert.throws(
    () => verifyAttestation({ ...r.attestation, payload: Buffer.from(text).toString("base64") }),
    (e) => isWireError(e, "BadSignature"),
  );
});
