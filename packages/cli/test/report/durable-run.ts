// A suspended-and-resumed run made with the library as demo 06 makes it: a real command executed
// and attested (runUnit, a plain process), the workspace snapshotted into a file store, the run
// parked and resumed with estimated idle energy, executed again, closed. Each interval's journal is
// kept in the store as the durable host keeps it (§13.7.3), and written beside it as `sbx run --out`
// writes journal.json.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, canonicalBytes, envelopeAddress, testKey, type Digest } from "@sbx/wire";
import { grantSetDoc, issueGrant } from "@sbx/jcp-grant/grant";
import type { SnapshotRef } from "@sbx/sandbox-attest/runrecord";
import { runUnit } from "@sbx/host/run";
import { snapshotDir } from "@sbx/host/snapshot";
import { FileStore } from "@sbx/host/store";
import { keepJournal } from "@sbx/host/durable";

/** The host key that signs the run's attestations and receipts. */
export const HOST = testKey("host");

export interface DurableRun {
  readonly dir: string;
  readonly store: FileStore;
  readonly id: Digest;
  readonly recordPath: string;
  /** The journals as `sbx run --out` writes them (for `--journal`); the store keeps them too. */
  readonly journals: readonly string[];
  /** The roots of the two intervals' journals, as the store keeps them (§13.7.3). */
  readonly journalRoots: readonly Digest[];
  /** The address of one file of the snapshot, and of the first attestation. */
  readonly leaf: Digest;
  readonly attestation: Digest;
  /** The root grant of the run's grant set (5,000,000 µJ). */
  readonly grant: Digest;
}

const unitDescriptor = { report: "durable run of the report test" };
const unit = addressOf(unitDescriptor);
// The run's grant set: one root grant with a joule budget, issued by the steward to the agent.
const grant = issueGrant(testKey("root-issuer"), {
  holder: testKey("alice").did,
  resources: ["/sandbox/*"],
  actions: ["exec"],
  uj: "5000000",
  exp_ms: 4_102_444_800_000,
  depth: 1,
  nonce: "0".repeat(32),
});
const grantDoc = grantSetDoc([envelopeAddress(grant)]);
const grants = addressOf(grantDoc);

async function execute(store: FileStore, dir: string, ws: string, head: Digest, script: string, i: number) {
  const r = await runUnit({
    argv: ["sh", "-c", script],
    cwd: ws,
    watch: ws,
    hostKey: HOST,
    unitId: unit,
    unit: unitDescriptor,
    grantsId: grants,
    manifest: addressOf({ image: `debian@sha256:${"a".repeat(64)}` }),
    policy: addressOf({ report: "no exec policy" }),
    maxLevel: "S0",
    runHead: head,
  });
  // As the durable host does (§13.7.3): the journal's tree nodes first, then receipt and attestation.
  const kept = await keepJournal(store, r.journal.events);
  await store.putSigned(r.receipt.envelope);
  const att = await store.putSigned(r.attestation);
  const journal = join(dir, `journal-${i}.json`);
  writeFileSync(journal, JSON.stringify({ head: r.journal.head(), events: r.journal.events }, null, 2));
  return { att, journal, root: kept.root! };
}

/** durableRun makes the run in a fresh directory: execute → suspend → resume → execute → close. */
export async function durableRun(): Promise<DurableRun> {
  const dir = mkdtempSync(join(tmpdir(), "sbx-report-"));
  const store = FileStore.open(join(dir, "store"), { create: true });
  const env = { image: `debian@sha256:${"a".repeat(64)}` };
  const manifest = await store.putObject(canonicalBytes(env));
  await store.putObject(canonicalBytes(grantDoc));
  await store.putSigned(grant);
  const ws = join(dir, "ws");
  mkdirSync(join(ws, "src"), { recursive: true });
  writeFileSync(join(ws, "src", "data.txt"), "the data the unit works on\n");
  const id = await store.createRecord(unit, grants);
  const e1 = await execute(store, dir, ws, id, "echo step1 > progress.txt; ls src", 1);
  let head = await store.appendSegment(id, id, { kind: "executed", attestation: e1.att });
  const snap = snapshotDir(store, ws);
  const ref: SnapshotRef = { fs_root: snap.fs_root, manifest };
  const parked = Date.now();
  head = await store.appendSegment(id, head, { kind: "suspended", snapshot: ref, at_ms: parked });
  await new Promise((r) => setTimeout(r, 300));
  head = await store.appendSegment(id, head, {
    kind: "resumed",
    snapshot: ref,
    at_ms: Date.now(),
    idle_uj: "1250",
    idle_provenance: "estimated",
    idle_source: "model:ccf.storage/1",
    idle_basis: { mib_s: "1", uw_per_tib: "1250000" },
  });
  const e2 = await execute(store, dir, ws, head, "cat progress.txt; echo step2 >> progress.txt", 2);
  head = await store.appendSegment(id, head, { kind: "executed", attestation: e2.att });
  await store.appendSegment(id, head, { kind: "closed", at_ms: Date.now(), outcome: "completed" });
  return {
    dir,
    store,
    id,
    recordPath: store.recordPath(id),
    journals: [e1.journal, e2.journal],
    journalRoots: [e1.root, e2.root],
    leaf: leafOf(store, snap.fs_root, "src", "data.txt"),
    attestation: e1.att,
    grant: envelopeAddress(grant),
  };
}

/** leafOf finds the digest of dir/name in a stored tree. */
function leafOf(store: FileStore, root: Digest, dir: string, name: string): Digest {
  const rd = JSON.parse(Buffer.from(store.getObjectSync(root)!).toString()) as {
    entries: { name: string; digest: Digest }[];
  };
  const sub = rd.entries.find((e) => e.name === dir)!;
  const sd = JSON.parse(Buffer.from(store.getObjectSync(sub.digest)!).toString()) as typeof rd;
  return sd.entries.find((e) => e.name === name)!.digest;
}
