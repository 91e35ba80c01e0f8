// Moving between stores (`sbx store copy`): every object, every signed object, every run record and
// every ledger (copylogs.ts) of one store into another, file store ⇄ PostgreSQL, verified on arrival. Objects stream (bounded
// memory) and must arrive under the address they left with (`ObjectMismatch`); signed objects must
// keep their payload address; records are replayed segment by segment through the destination's
// compare-and-append (so the destination re-checks every §13.3 rule) and then read back, verified from
// genesis, and compared byte for byte with the source. A copy interrupted half-way is resumed by
// running it again: what is already there is kept, a record already there continues from its head
// if it is a prefix of the source's, and one that diverges is refused (`RecordDiverged`).
import { createReadStream, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bytesEqual, formatDigest, fromHex, type Digest, type Envelope } from "@sbx/wire";
import { decodeRecord, SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { openSigned, type Store } from "@sbx/sandbox-attest/store";
import { HostError } from "../errors.ts";
import { FileStore } from "../store/filestore.ts";
import { copyLogs } from "./copylogs.ts";
import { CHUNK_BYTES } from "./objects.ts";
import { PgStore } from "./pgstore.ts";

/** What a copy moved. */
export interface CopyReport {
  objects: number;
  signed: number;
  records: number;
  segments: number;
  bytes: number;
  /** ledgers (copylogs.ts) */
  logs: number;
  entries: number;
}

/** Either kind of store a copy reads or writes. */
export type AnyStore = FileStore | PgStore;

const HEX64 = /^[0-9a-f]{64}$/;

function* fileAddresses(root: string, sub: string, suffix: string): Generator<Digest> {
  const top = join(root, sub);
  for (const d of readdirSync(top).sort()) {
    if (!/^[0-9a-f]{2}$/.test(d)) continue;
    for (const f of readdirSync(join(top, d)).sort()) {
      const hex = d + f.slice(0, f.length - suffix.length);
      if (f.endsWith(suffix) && HEX64.test(hex)) yield formatDigest(fromHex(hex));
    }
  }
}

// An address column is 32 bytes by its CHECK; one of another length (the CHECK dropped) is refused.
function pgAddress(b: Buffer): Digest {
  if (b.length !== 32)
    throw new HostError("StoreCorrupt", `an address of ${String(b.length)} bytes is stored`);
  return formatDigest(new Uint8Array(b));
}

async function* listObjects(s: AnyStore): AsyncGenerator<Digest> {
  if (s instanceof FileStore) yield* fileAddresses(s.root, "objects", "");
  else
    for (const r of (await s.pool.query<{ a: Buffer }>("SELECT address AS a FROM sbx_objects ORDER BY 1"))
      .rows)
      yield pgAddress(r.a);
}
async function* listSigned(s: AnyStore): AsyncGenerator<Digest> {
  if (s instanceof FileStore) yield* fileAddresses(s.root, "signed", ".json");
  else
    for (const r of (await s.pool.query<{ a: Buffer }>("SELECT address AS a FROM sbx_signed ORDER BY 1"))
      .rows)
      yield pgAddress(r.a);
}
/** listRecords lists the id of every record a store holds. */
export async function listRecords(s: AnyStore): Promise<Digest[]> {
  if (s instanceof PgStore) return s.listRecords();
  const dir = join(s.root, "records");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".runrecord") && HEX64.test(f.slice(0, 64)))
    .sort()
    .map((f) => formatDigest(fromHex(f.slice(0, 64))));
}

/** copyObject streams one object from `from` to `to`, refusing bytes that are not `a`; returns its size. */
async function copyObject(from: AnyStore, to: AnyStore, a: Digest): Promise<number> {
  if (to instanceof PgStore) {
    const src =
      from instanceof FileStore
        ? createReadStream(from.objectPath(a), { highWaterMark: CHUNK_BYTES })
        : await from.getObjectStream(a);
    if (src === null) throw new HostError("StoreCorrupt", `object ${a} vanished during the copy`);
    return (await to.putObjectStream(src, a)).size;
  }
  if (from instanceof FileStore) {
    const { address, size } = to.putFileSync(from.objectPath(a), true);
    return arrived(a, address, size);
  }
  // PostgreSQL → file: through a temporary file, so a large object is never whole in memory.
  const src = await from.getObjectStream(a);
  if (src === null) throw new HostError("StoreCorrupt", `object ${a} vanished during the copy`);
  const tmp = mkdtempSync(join(tmpdir(), "sbx-copy-"));
  try {
    const fh = await open(join(tmp, "o"), "wx", 0o600);
    try {
      for await (const c of src) await fh.write(c);
    } finally {
      await fh.close();
    }
    const { address, size } = to.putFileSync(join(tmp, "o"), true);
    return arrived(a, address, size);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function arrived(want: Digest, got: Digest, size: number): number {
  if (got !== want) throw new SandboxAttestError("ObjectMismatch", `object ${want} arrived as ${got}`);
  return size;
}

async function copySigned(from: Store, to: Store, a: Digest): Promise<void> {
  const env = (await from.getSigned(a)) as Envelope | null;
  if (env === null) throw new HostError("StoreCorrupt", `signed object ${a} vanished during the copy`);
  // Verified as a reader opens it (shape, every signature, canonical payload: wire codes such as
  // BadSignature), of whatever payload type it states, and under its own payload address.
  openSigned(a, env, typeof env.payloadType === "string" ? env.payloadType : "");
  if ((await to.putSigned(env)) !== a)
    throw new SandboxAttestError("ObjectMismatch", `signed ${a} arrived elsewhere`);
}

/** copyRecord replays one record into `to` from where `to` has it; returns the segments appended. */
async function copyRecord(from: Store, to: Store, id: Digest): Promise<number> {
  const bytes = await from.readRecordBytes(id);
  if (bytes === null) throw new SandboxAttestError("RecordMissing", `no record ${id}`);
  const { record } = decodeRecord(bytes);
  let have = await to.readRecordBytes(id);
  if (have === null) {
    await to.createRecord(record.unitId, record.grantsId);
    have = await to.readRecordBytes(id);
  }
  const there = decodeRecord(have ?? new Uint8Array()).record;
  const n = there.segments.length;
  if (n > record.segments.length || there.heads.some((h, i) => h !== record.heads[i]))
    throw new HostError("RecordDiverged", `record ${id} in the destination is not a prefix of the source's`);
  let head = there.head;
  for (const seg of record.segments.slice(n)) head = await to.appendSegment(id, head, seg);
  const back = await to.readRecordBytes(id);
  if (back === null || !bytesEqual(back, bytes))
    throw new HostError("RecordDiverged", `record ${id} reads back different from its source`);
  return record.segments.length - n;
}

/**
 * copyStore copies every object, signed object, run record and ledger (copylogs.ts) of `from` into
 * `to` (objects first, so a record never arrives before what it names), each verified on arrival. `progress` hears each.
 */
export async function copyStore(
  from: AnyStore,
  to: AnyStore,
  progress: (what: string) => void = () => undefined,
): Promise<CopyReport> {
  const r: CopyReport = { objects: 0, signed: 0, records: 0, segments: 0, bytes: 0, logs: 0, entries: 0 };
  for await (const a of listObjects(from)) {
    if (!(await to.hasObject(a))) r.bytes += await copyObject(from, to, a);
    r.objects++;
  }
  if (to instanceof FileStore) to.syncPending();
  for await (const a of listSigned(from)) {
    await copySigned(from, to, a);
    r.signed++;
  }
  progress(`${String(r.objects)} objects, ${String(r.signed)} signed objects`);
  for (const id of await listRecords(from)) {
    r.segments += await copyRecord(from, to, id);
    r.records++;
    progress(`record ${id}`);
  }
  const l = await copyLogs(from, to, progress);
  r.logs = l.logs;
  r.entries = l.entries;
  return r;
}
