// `sbx import ARCHIVE --store postgres://…`: the archive verified whole first (openRunArchive, the
// same checks as an import into a folder), then its objects and signed objects stored in the
// database (each in its own transaction, deduplicated by address: an object without a record
// naming it is harmless), then the record written in ONE transaction (importRecord): its header
// and every segment row, or nothing. A record of the same id already there with the same bytes is
// "already held"; one that is a prefix of the archive's (held by a host, or copied in part) is
// continued in that transaction; any other is refused (`RecordExists`), nothing written. Finally
// the record is read back verified from genesis by a reader that held nothing, byte for byte.
// A reader never sees a part of an imported record; a SIGKILL at any step leaves the record absent
// or whole (objects written before it stay, as a retry would write them again).
import { bytesEqual } from "@sbx/wire";
import {
  openRunArchive,
  refuseMovedAway,
  type ImportResult,
  type OpenedArchive,
  type ReadInto,
} from "@sbx/host/archive";
import { importRecord, PgStore } from "@sbx/host/pg";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";

/** importIntoShared imports a run archive into the PostgreSQL store at `url` (see the file comment). */
export async function importIntoShared(
  url: string,
  input: Uint8Array | ReadInto,
  hosts?: readonly string[],
): Promise<ImportResult> {
  const a = openRunArchive(input, hosts);
  try {
    return await importOpened(url, a);
  } finally {
    a.plain.dispose(); // what was staged on disk while the archive was read
  }
}

async function importOpened(url: string, a: OpenedArchive): Promise<ImportResult> {
  const store = await PgStore.open(url);
  try {
    // Decided against what the database holds before anything is written: a record of this id
    // that is not a prefix of the archive's (line by line) is RecordExists, nothing stored. (The
    // transaction of importRecord checks again, for a writer racing this one.)
    const held = await store.readRecordBytes(a.id);
    refuseMovedAway(a.id, held);
    if (
      held !== null &&
      !(held.length <= a.record.length && bytesEqual(held, a.record.subarray(0, held.length)))
    )
      throw new SandboxAttestError("RecordExists", `the store holds another record ${a.id}`);
    for (const x of a.plain.addresses()) await store.putObject(a.plain.get(x)!);
    for (const env of a.signed.values()) await store.putSigned(env);
    const { created, added } = await importRecord(store, a.record);
    store.forgetVerified(a.id);
    const back = await store.readRecordBytes(a.id);
    if (back === null || !bytesEqual(back, a.record))
      throw new SandboxAttestError("RecordExists", `record ${a.id} reads back other than the archive's`);
    const objects = a.plain.size + a.signed.size;
    return {
      id: a.id,
      head: a.run.record!.head,
      created: created || added > 0,
      objects,
      signers: a.run.signers,
    };
  } finally {
    await store.close();
  }
}
