// `sbx import ARCHIVE --store postgres://…`: the archive verified whole first (openRunArchive, the
// same checks as an import into a folder), then its objects and signed objects stored in the
// database, then its record replayed segment by segment through the database's compare-and-append
// (which holds every segment to §13.3 again) and read back byte for byte. A record of the same id
// already there with the same bytes is "already held"; one that is a prefix of the archive's (an
// import cut short) is continued; any other is refused (`RecordExists`).
import { bytesEqual } from "@sbx/wire";
import { openRunArchive, type ImportResult } from "@sbx/host/archive";
import { PgStore } from "@sbx/host/pg";
import { decodeRecord, SandboxAttestError } from "@sbx/sandbox-attest/runrecord";

/** importIntoShared imports a run archive into the PostgreSQL store at `url` (see the file comment). */
export async function importIntoShared(
  url: string,
  bytes: Uint8Array,
  hosts?: readonly string[],
): Promise<ImportResult> {
  const a = openRunArchive(bytes, hosts);
  const store = await PgStore.open(url);
  try {
    for (const b of a.plain.values()) await store.putObject(b);
    for (const env of a.signed.values()) await store.putSigned(env);
    const { record } = decodeRecord(a.record);
    let have = await store.readRecordBytes(a.id);
    const created = have === null || !bytesEqual(have, a.record);
    if (have === null) {
      await store.createRecord(record.unitId, record.grantsId);
      have = await store.readRecordBytes(a.id);
    }
    const there = decodeRecord(have ?? new Uint8Array()).record;
    const n = there.segments.length;
    if (n > record.segments.length || there.heads.some((h, i) => h !== record.heads[i]))
      throw new SandboxAttestError("RecordExists", `the store holds another record ${a.id}`);
    let head = there.head;
    for (const seg of record.segments.slice(n)) head = await store.appendSegment(a.id, head, seg);
    const back = await store.readRecordBytes(a.id);
    if (back === null || !bytesEqual(back, a.record))
      throw new SandboxAttestError("RecordExists", `record ${a.id} reads back other than the archive's`);
    const objects = a.plain.size + a.signed.size;
    return { id: a.id, head: a.run.record!.head, created, objects, signers: a.run.signers };
  } finally {
    await store.close();
  }
}
