// Demo part 6: a durable run (§13). A real command executes in a workspace, the run suspends with a
// workspace snapshot into the file store, the sandbox is thrown away, the run resumes from the store
// into a fresh directory after every precondition is checked (and forked snapshots, a wrong
// environment and execution while parked are refused), executes again, closes, and is verified from
// files alone — energy reported as active + idle.
import { mkdirSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { randomFillSync } from "node:crypto";
import { join } from "node:path";
import { addressOf, canonicalBytes, testKey, type Digest } from "@sbx/wire";
import { estimateStorage } from "@sbx/sandbox-attest/energy";
import {
  ingestManifest,
  offerFor,
  satisfies,
  type HostOffer,
  type Manifest,
} from "@sbx/sandbox-attest/manifest";
import { type EnvironmentCheck, type SnapshotRef } from "@sbx/sandbox-attest/runrecord";
import { readRun, resumeRun } from "@sbx/sandbox-attest/store";
import { runUnit } from "@sbx/host/run";
import { restoreSnapshot, snapshotDir } from "@sbx/host/snapshot";
import { FileStore, verifyRecordFiles } from "@sbx/host/store";
import { runCli } from "@sbx/cli";
import { check, type DemoContext } from "./context.ts";

const host = testKey("host");
const unitDescriptor = { demo: "06-durable-run unit descriptor", nonce: "demo-6" };
const unit = addressOf(unitDescriptor);
const grants = addressOf({ demo: "06-durable-run grant set" });
const policy = addressOf({ demo: "no exec policy" });
const offer: HostOffer = {
  cpus: 2,
  memory_bytes: String(4 * 2 ** 30),
  storage_bytes: String(10 * 2 ** 30),
  gpu: null,
};

async function refused(p: Promise<unknown>, code: string): Promise<string> {
  try {
    await p;
  } catch (e) {
    const got = (e as { code?: string }).code ?? "?";
    check(got === code, `refused with ${code} (got ${got})`);
    return got;
  }
  throw new Error(`demo check failed: must be refused with ${code}`);
}

function envCheck(m: Manifest, image?: string): EnvironmentCheck {
  const offered = { ...offerFor(m.environment, offer), ...(image !== undefined ? { image } : {}) };
  return { satisfies: (address: Digest) => satisfies(m, offered, address).ok };
}

async function execute(
  ctx: DemoContext,
  store: FileStore,
  m: Manifest,
  ws: string,
  head: Digest,
  script: string,
): Promise<{ att: Digest; uj: string }> {
  const r = await runUnit({
    argv: ["sh", "-c", script],
    cwd: ws,
    watch: ws,
    hostKey: host,
    unitId: unit,
    unit: unitDescriptor,
    grantsId: grants,
    manifest: m.address,
    policy,
    maxLevel: "S0", // a plain process: no §5 isolation, so no higher level may be stated (§9)
    runHead: head,
  });
  await store.putSigned(r.receipt.envelope);
  const att = await store.putSigned(r.attestation);
  ctx.say(
    `executed ${JSON.stringify(script)} → ${JSON.stringify(r.stdout.toString().trim())}; attestation ${att}`,
  );
  return { att, uj: r.receipt.receipt.total_uj };
}

export default async function durableRun(ctx: DemoContext): Promise<void> {
  ctx.title("durable run record: execute → suspend → resume elsewhere → execute → close → verify (§13)");
  const store = FileStore.open(join(ctx.work, "store6"), { create: true });
  const m = ingestManifest(`{"image": "debian@sha256:${"a".repeat(64)}"}`);
  check(
    (await store.putObject(canonicalBytes(m.environment))) === m.address,
    "manifest environment stored by its address",
  );
  const ws = join(ctx.work, "ws6-host-a");
  mkdirSync(ws, { recursive: true });
  const data = new Uint8Array(32 << 20);
  randomFillSync(data);
  writeFileSync(join(ws, "dataset.bin"), data);
  writeFileSync(join(ws, "tool.sh"), "#!/bin/sh\necho tool ran\n");
  chmodSync(join(ws, "tool.sh"), 0o755);
  const id = await store.createRecord(unit, grants);
  ctx.say(`run ${id} (head₀ binds unit ${unit.slice(0, 19)}… and grants ${grants.slice(0, 19)}…)`);

  const e1 = await execute(ctx, store, m, ws, id, "echo step1 > progress.txt; ./tool.sh");
  let head = await store.appendSegment(id, id, { kind: "executed", attestation: e1.att });
  const snap = snapshotDir(store, ws);
  const ref: SnapshotRef = { fs_root: snap.fs_root, manifest: m.address };
  const parkedAt = Date.now();
  head = await store.appendSegment(id, head, { kind: "suspended", snapshot: ref, at_ms: parkedAt });
  ctx.say(
    `suspended: workspace snapshot ${snap.fs_root} (${snap.files} files, ${snap.bytes} bytes); sandbox directory deleted`,
  );
  rmSync(ws, { recursive: true });

  ctx.say(
    `execution while parked: ${await refused(store.appendSegment(id, head, { kind: "executed", attestation: e1.att }), "PhaseViolation")}`,
  );
  await new Promise((r) => setTimeout(r, 1500));
  const parkedMs = Date.now() - parkedAt;
  const idle = estimateStorage(BigInt(Math.ceil((snap.bytes / (1 << 20)) * (parkedMs / 1000))), {
    source: "snapshot bytes retained in the file store",
  });
  const inputs = idle.model.inputs as { readonly mib_s: string };
  const coeff = idle.model.coefficients as { readonly uw_per_tib: number };
  const basis = { mib_s: inputs.mib_s, uw_per_tib: String(coeff.uw_per_tib) };
  const req = {
    offered: ref,
    env: envCheck(m),
    idle: { uj: idle.uj, provenance: "estimated" as const, source: "model:ccf.storage/1", basis },
    atMs: Date.now(),
  };
  ctx.say(
    `forked snapshot offered: ${await refused(resumeRun(store, id, { ...req, offered: { ...ref, fs_root: addressOf({ forked: true }) } }), "SnapshotMismatch")}`,
  );
  ctx.say(
    `environment with another image: ${await refused(resumeRun(store, id, { ...req, env: envCheck(m, `debian@sha256:${"b".repeat(64)}`) }), "EnvironmentMismatch")}`,
  );
  head = await resumeRun(store, id, req);
  ctx.say(
    `resumed after ${parkedMs} ms parked; idle ${idle.uj} µJ estimated (ccf.storage/1, ${basis.mib_s} MiB·s × ${basis.uw_per_tib} µW/TiB)`,
  );
  const ws2 = join(ctx.work, "ws6-host-b");
  restoreSnapshot(store, (await readRun(store, id)).parkedSnapshot?.fs_root ?? snap.fs_root, ws2);
  check(snapshotDir(store, ws2).fs_root === snap.fs_root, "restored workspace has the recorded root");
  ctx.say(`workspace restored into a fresh directory, verified object by object`);

  const e2 = await execute(
    ctx,
    store,
    m,
    ws2,
    head,
    "cat progress.txt; echo step2 >> progress.txt; ./tool.sh",
  );
  check(readFileSync(join(ws2, "progress.txt"), "utf8") === "step1\nstep2\n", "state survived the park");
  head = await store.appendSegment(id, head, { kind: "executed", attestation: e2.att });
  head = await store.appendSegment(id, head, { kind: "closed", at_ms: Date.now(), outcome: "completed" });
  ctx.say(
    `closed; append after close: ${await refused(store.appendSegment(id, head, { kind: "executed", attestation: e2.att }), "RecordClosed")}`,
  );

  const report = verifyRecordFiles(store.recordPath(id), FileStore.open(store.root, { readOnly: true }));
  check(
    report.valid && report.energy !== null && report.energy.complete,
    "record verifies from files with complete energy",
  );
  check(
    BigInt(report.energy.total_uj) === BigInt(e1.uj) + BigInt(e2.uj) + BigInt(idle.uj),
    "total = receipts + idle",
  );
  ctx.say(`sbx verify ${store.recordPath(id).replace(ctx.work, "$WORK")} --trust ${host.did}:`);
  const out: string[] = [];
  const code = await runCli("sbx", ["verify", store.recordPath(id), "--trust", host.did], {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
  });
  for (const l of out) ctx.say(`  ${l}`);
  check(code === 0, "sbx verify exits 0");
  const bytes = readFileSync(store.recordPath(id));
  const flipped = Buffer.from(bytes);
  flipped[Math.floor(bytes.length / 2)]! ^= 1;
  chmodSync(store.recordPath(id), 0o644);
  writeFileSync(store.recordPath(id), flipped);
  const bad = verifyRecordFiles(store.recordPath(id), store);
  check(!bad.valid, "one flipped byte is caught");
  ctx.say(`one byte flipped in the record file: INVALID ${bad.error?.code ?? "?"}`);
  writeFileSync(store.recordPath(id), bytes);
}
