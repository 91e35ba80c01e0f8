// The writer the crash test kills: opens the store, stores two objects, snapshots the workspace,
// and appends segments to one run record, printing an acknowledgement after each operation returns.
// Run with SBX_STORE_CRASH_AT=k to die by SIGKILL at its k-th write step (see src/store/fault.ts).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import { decodeRecord, runGenesis } from "@sbx/sandbox-attest/runrecord";
import { FileStore } from "../../src/store/index.ts";
import { snapshotDir } from "../../src/snapshot/index.ts";

const [root, workspace, tag] = process.argv.slice(2) as [string, string, string];
const ack = (line: string): void => void process.stdout.write(line + "\n");
const d = (s: string): Digest => digestBytes(utf8(s));
const UNIT = d("crash-unit");
const GRANTS = d("crash-grants");

const store = FileStore.open(root, { create: true });
ack("open");
for (const i of [1, 2]) ack(`obj ${await store.putObject(utf8(`object ${tag} ${i}`))}`);
writeFileSync(join(workspace, "changing.txt"), `state ${tag}\n`.repeat(50));
const snap = snapshotDir(store, workspace);
ack(`snap ${snap.fs_root}`);
const id = await ensureRecord();

async function ensureRecord(): Promise<Digest> {
  try {
    return await store.createRecord(UNIT, GRANTS);
  } catch (e) {
    if ((e as { code?: string }).code === "RecordExists") return runGenesis(UNIT, GRANTS);
    throw e;
  }
}

let record = decodeRecord((await store.readRecordBytes(id))!).record;
const append = async (seg: Parameters<typeof store.appendSegment>[2]): Promise<void> => {
  const head = await store.appendSegment(id, record.head, seg);
  ack(`seg ${record.segments.length + 1} ${head}`);
  record = decodeRecord((await store.readRecordBytes(id))!).record;
};
const now = Date.now();
const ref = { fs_root: snap.fs_root, manifest: d("manifest") };
if (record.parkedSnapshot !== null)
  await append({
    kind: "resumed",
    snapshot: record.parkedSnapshot,
    at_ms: now,
    idle_uj: "10",
    idle_provenance: "measured",
    idle_source: "test",
  });
await append({ kind: "executed", attestation: d(`att ${tag}`) });
await append({ kind: "suspended", snapshot: ref, at_ms: now });
await append({
  kind: "resumed",
  snapshot: ref,
  at_ms: now,
  idle_uj: "5",
  idle_provenance: "measured",
  idle_source: "test",
});
ack("done");
