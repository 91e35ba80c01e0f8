// A small real run kept in a file store: execute → suspend (workspace snapshot) → resume → execute →
// close, with signed attestations, receipt objects and the manifest's environment object.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressOf, canonicalBytes, digestBytes, testKey, utf8, type Digest } from "@sbx/wire";
import { signAttestation } from "@sbx/sandbox-attest/attestation";
import type { Segment, SnapshotRef } from "@sbx/sandbox-attest/runrecord";
import { FileStore } from "../../src/store/index.ts";
import { snapshotDir } from "../../src/snapshot/index.ts";

export interface FixtureRun {
  readonly store: FileStore;
  readonly id: Digest;
  readonly recordPath: string;
  readonly snapshot: SnapshotRef;
  readonly attestations: readonly Digest[];
}

// The unit descriptor the attestations name (their subject, §7.1), and its address.
const UNIT_DESCRIPTOR = { fixture: "unit" };
const UNIT = addressOf(UNIT_DESCRIPTOR);
const GRANTS = digestBytes(utf8("fixture-grants"));

async function attest(
  store: FileStore,
  manifest: Digest,
  head: Digest,
  uj: string,
  t: number,
): Promise<Digest> {
  const receipt = await store.putObject(canonicalBytes({ receipt: "fixture", total_uj: uj }));
  const env = signAttestation(
    {
      unit_id: UNIT,
      grants_id: GRANTS,
      manifest,
      exec_policy: digestBytes(utf8("policy")),
      energy: { receipt, total_uj: uj, provenance: "estimated" },
      journal: { root: digestBytes(utf8(`journal ${t}`)), events: 3 },
      outcome: { status: "exited", exit_code: 0 },
      interval: { start_ms: t, end_ms: t + 100 },
      level: "S5",
      run_head: head,
    },
    testKey("host"),
    UNIT_DESCRIPTOR,
  );
  return store.putSigned(env);
}

/** fixtureRun builds the run in a fresh store and returns where everything is. */
export async function fixtureRun(): Promise<FixtureRun> {
  const dir = mkdtempSync(join(tmpdir(), "sbx-fixture-"));
  const store = FileStore.open(join(dir, "store"), { create: true });
  const ws = join(dir, "ws");
  mkdirSync(join(ws, "src"), { recursive: true });
  writeFileSync(join(ws, "src", "a.txt"), "alpha\n");
  writeFileSync(join(ws, "notes"), "n\n");
  symlinkSync("src/a.txt", join(ws, "link"));
  const env = { image: "debian@sha256:" + "0".repeat(64) };
  const manifest = await store.putObject(canonicalBytes(env));
  if (manifest !== addressOf(env)) throw new Error("manifest object address");
  const snapshot: SnapshotRef = { fs_root: snapshotDir(store, ws).fs_root, manifest };
  const id = await store.createRecord(UNIT, GRANTS);
  const a1 = await attest(store, manifest, id, "1500000", 1000);
  const segs: Segment[] = [
    { kind: "executed", attestation: a1 },
    { kind: "suspended", snapshot, at_ms: 2000 },
  ];
  let head = id;
  for (const s of segs) head = await store.appendSegment(id, head, s);
  head = await store.appendSegment(id, head, {
    kind: "resumed",
    snapshot,
    at_ms: 9000,
    idle_uj: "420000",
    idle_provenance: "estimated",
    idle_source: "model:storage",
    idle_basis: { wh_per_tb_hour: "1.2" },
  });
  const a2 = await attest(store, manifest, head, "2500000", 9100);
  head = await store.appendSegment(id, head, { kind: "executed", attestation: a2 });
  await store.appendSegment(id, head, { kind: "closed", at_ms: 9500, outcome: "completed" });
  return { store, id, recordPath: store.recordPath(id), snapshot, attestations: [a1, a2] };
}
