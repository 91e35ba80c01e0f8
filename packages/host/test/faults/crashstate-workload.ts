// The workload whose system calls crashstate.faults.ts records (under strace) and replays: in a
// fresh store folder it creates a record and appends to it, publishes objects, snapshots a small
// workspace, and appends to two logs (the spend ledger's appendLog, the pool ledger's appendLogAt).
// Each operation's acknowledgement is one line on stdout, written after the call returned: strace
// sees that write, so the checker knows exactly which system calls each acknowledgement follows.
import { mkdirSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { digestBytes, utf8, type Digest } from "@sbx/wire";
import type { Segment } from "@sbx/sandbox-attest/runrecord";
import { appendLog, appendLogAt, LOG_GENESIS, LOG_START } from "../../src/log/index.ts";
import { snapshotDir } from "../../src/snapshot/index.ts";
import { FileStore } from "../../src/store/index.ts";

const [root, work] = process.argv.slice(2) as [string, string];
const ack = (o: Record<string, unknown>): void => void writeSync(1, `ack ${JSON.stringify(o)}\n`);
const d = (s: string): Digest => digestBytes(utf8(s));

// The workspace is made before the store (it is the unit's, not the store's).
mkdirSync(join(work, "src"), { recursive: true });
writeFileSync(join(work, "a.txt"), "alpha\n");
writeFileSync(join(work, "src", "b.txt"), "beta ".repeat(40));
symlinkSync("../a.txt", join(work, "src", "up"));
ack({ op: "begin" });

const store = FileStore.open(root, { create: true });
const id = await store.createRecord(d("unit"), d("grants"));
ack({ op: "record", id });
let head: Digest = id;
const segs: Segment[] = [
  { kind: "executed", attestation: d("att-1") },
  { kind: "suspended", at_ms: 10, snapshot: { fs_root: d("fs"), manifest: d("m") } },
  {
    kind: "resumed",
    at_ms: 20,
    snapshot: { fs_root: d("fs"), manifest: d("m") },
    idle_uj: "5",
    idle_source: "meter:x",
    idle_provenance: "measured",
  },
];
for (const s of segs) {
  head = store.appendSegmentSync(id, head, s);
  ack({ op: "segment", head });
}
for (const text of ["object one\n", "object two, a little longer\n"]) {
  const address = store.putObjectSync(utf8(text));
  ack({ op: "object", address, text });
}
const snap = snapshotDir(store, work);
ack({ op: "snapshot", fs_root: snap.fs_root });
const spend = join(root, "spend");
let sh = LOG_GENESIS;
for (const p of ["spend-1", "spend-2"]) {
  sh = appendLog(spend, sh, utf8(p));
  ack({ op: "spend", payload: p });
}
const pool = join(root, "pool");
let mark = LOG_START;
for (const p of ["pool-1", "pool-2"]) {
  mark = appendLogAt(pool, mark, utf8(p));
  ack({ op: "pool", payload: p });
}
