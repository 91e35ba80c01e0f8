// §13.13 Run archives: a run's record and every object it references in one file, so a second host
// can import it into its own store and resume. Members, in this order: `sandbox.runarchive/1`
// (empty, the format), `record/<id hex>.runrecord` (the §13.5 wire form), `objects/<hex>` (raw
// bytes), `signed/<hex>.json` (a DSSE envelope's JCS, under its payload address), each kind sorted.
// Names are never paths: every object is stored by the address of its content, after checking that
// the name is that address. Import verifies everything before it writes anything, then writes the
// objects, makes them durable, and publishes the record last and atomically (link(2)): a crash
// leaves either no record or the whole run; objects without a record are unreferenced and harmless.
// Each interval's journal, kept as the nodes of its tree (§13.7.3), goes along as objects and is
// verified on import (journals.ts).
import {
  assertEnvelopeShape,
  bytesEqual,
  canonicalBytes,
  envelopeAddress,
  formatDigest,
  fromHex,
  parseCanonical,
  toHex,
  parseDigest,
  type Digest,
  type Envelope,
} from "@sbx/wire";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { verifyRun, type RunVerification } from "@sbx/sandbox-attest/store";
import { decodeRecord, type RunRecord } from "@sbx/sandbox-attest/runrecord";
import { HostError } from "../errors.ts";
import type { FileStore } from "../store/filestore.ts";
import { storeObjects } from "../store/verifyfiles.ts";
import {
  readArchiveStream,
  readArchive,
  writeArchive,
  type ArchiveMember,
  type MemberSink,
  type ReadInto,
} from "./tar.ts";
import { inMemory, staged, type PlainHolder, type PlainObjects } from "./staged.ts";
import { unitCitesOf } from "../durable/cited.ts";
import { journalNodesOf } from "./journals.ts";

/** The format member's name. */
export const RUN_ARCHIVE_FORMAT = "sandbox.runarchive/1";
/**
 * Largest archive read (checked from its size before reading), members and member size; and the
 * most bytes of the record and signed members together, which are held in memory while the archive
 * is verified (plain objects read from a stream are staged on disk, staged.ts).
 */
export const ARCHIVE_LIMITS = {
  maxBytes: 1024 * 1024 * 1024,
  maxMembers: 1_000_000,
  maxMemberBytes: 512 * 1024 * 1024,
  maxHeldBytes: 64 * 1024 * 1024,
};

const hexOf = (d: Digest): string => toHex(parseDigest(d));

/**
 * exportRun returns the archive of run `id` from `store`: refuses a run that does not verify (its
 * code) or whose objects are not all held (`ArchiveIncomplete`): an archive always holds the whole run.
 */
export function exportRun(store: FileStore, id: Digest): Uint8Array {
  const { bytes } = store.readRunSync(id);
  const run = verifyRun(bytes, storeObjects(store), { expectId: id });
  if (!run.valid)
    throw new SandboxAttestError((run.error?.code ?? "BadRecord") as "BadRecord", run.error?.message ?? "");
  if (run.missing.length > 0)
    throw new HostError("ArchiveIncomplete", `the store lacks ${run.missing.join(", ")}`);
  const members: ArchiveMember[] = [
    { name: RUN_ARCHIVE_FORMAT, data: new Uint8Array(0) },
    { name: `record/${hexOf(id)}.runrecord`, data: handedOffBytes(bytes, run.record!) },
  ];
  for (const a of run.objects.plain)
    members.push({ name: `objects/${hexOf(a)}`, data: store.getObjectSync(a)! });
  // The unit descriptor (its address is the record's unit id) goes along when the store holds it:
  // a host resuming the run restarts the unit's own command from it.
  const unit = run.record!.unitId;
  const descriptor = run.objects.plain.includes(unit) ? null : store.getObjectSync(unit);
  if (descriptor !== null) members.push({ name: `objects/${hexOf(unit)}`, data: descriptor });
  // What the unit's labels name (its exec policy, its grant chain: durable/cited.ts) goes too.
  for (const a of unitCitesOf(descriptor ?? store.getObjectSync(unit))) {
    const b = run.objects.plain.includes(a) ? null : store.getObjectSync(a);
    if (b !== null) members.push({ name: `objects/${hexOf(a)}`, data: b });
  }
  // Each interval's journal kept as the nodes of its tree (§13.7.3; journals.ts).
  const held = new Set(members.map((m) => m.name));
  const getSigned = (a: Digest): Envelope | null => store.getSignedSync(a) as Envelope | null;
  const journal = journalNodesOf(run.record!, getSigned, (x) => store.getObjectSync(x));
  for (const [a, b] of [...journal].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
    if (!held.has(`objects/${hexOf(a)}`)) members.push({ name: `objects/${hexOf(a)}`, data: b });
  for (const a of run.objects.signed)
    members.push({ name: `signed/${hexOf(a)}.json`, data: canonicalBytes(store.getSignedSync(a)) });
  return writeArchive(members);
}

/**
 * handedOffBytes is what an archive carries of a record (§13.13): the record itself, or, when it ends
 * in a hand-off (§13.2a), the record at the head handed off (its last line left out), which the
 * importing store continues from.
 */
function handedOffBytes(bytes: Uint8Array, record: RunRecord): Uint8Array {
  if (record.movedTo === null) return bytes;
  return bytes.subarray(0, bytes.lastIndexOf(0x0a, bytes.length - 2) + 1);
}

/**
 * refuseMovedAway refuses an import of run `id` into a store whose record of it ends in a hand-off
 * (§13.13, `RunMoved`, `held` the bytes it holds, null when none): the run left that store, which
 * never continues it. A held record that does not verify is left to the import's own comparison.
 */
export function refuseMovedAway(id: Digest, held: Uint8Array | null): void {
  let to: string | null = null;
  try {
    if (held !== null) to = decodeRecord(held, { allowTorn: true }).record.movedTo;
  } catch {
    return;
  }
  if (to !== null)
    throw new SandboxAttestError("RunMoved", `run ${id} moved from this store to ${JSON.stringify(to)}`);
}

/** A verified archive: the run's id, record bytes, verification, and its objects by address. */
export interface OpenedArchive {
  readonly id: Digest;
  readonly record: Uint8Array;
  readonly run: RunVerification;
  /** Its plain objects (staged on disk when read from a stream: dispose of them when done). */
  readonly plain: PlainObjects;
  readonly signed: ReadonlyMap<Digest, Envelope>;
}

const NAME = /^(record|objects|signed)\/([0-9a-f]{64})(\.runrecord|\.json)?$/;

/** memberName splits a member's name into its kind and address: `UnexpectedMember` for any other name. */
function memberName(name: string): { kind: string; address: Digest } {
  const x = NAME.exec(name);
  const kind = x?.[1];
  const suffix = x?.[3] ?? "";
  if (
    x === null ||
    (kind === "record") !== (suffix === ".runrecord") ||
    (kind === "signed") !== (suffix === ".json")
  )
    throw new HostError("UnexpectedMember", `member ${name} is not part of a run archive`);
  return { kind: kind!, address: formatDigest(fromHex(x[2]!)) };
}

function sortMember(
  o: { record: [Digest, Uint8Array] | null; plain: PlainHolder; signed: Map<Digest, Envelope> },
  m: ArchiveMember,
): void {
  const { kind, address } = memberName(m.name);
  if (kind === "record") {
    if (o.record !== null) throw new HostError("UnexpectedMember", "more than one record");
    o.record = [address, m.data];
  } else if (kind === "objects") o.plain.add(m.name, address, m.data);
  else {
    // A member that is not an envelope (JSON null, a list, extra members) is `BadEnvelope`.
    const env: unknown = parseCanonical(m.data);
    assertEnvelopeShape(env);
    if (envelopeAddress(env) !== address)
      throw new SandboxAttestError(
        "ObjectMismatch",
        `member ${m.name} is not stored under its payload address`,
      );
    o.signed.set(address, env);
  }
}

/**
 * openRunArchive verifies an archive completely, writing nothing: its container (`BadArchive`,
 * `DuplicateMember`), its members (`UnexpectedMember`: a name that is not the format, one record,
 * an object or a signed object, refused from its header before its content is read; `BadEnvelope`:
 * a signed member that is not an envelope; `ObjectMismatch`: content that is not its name's
 * address), the run (verifyRun: every §13/§7 code, `HostMismatch` for a signer outside `hosts`),
 * that every object the run references is held (`ArchiveIncomplete`) and every member is referenced
 * as what it is (`UnexpectedMember`: a plain object the run does not cite as plain, a signed one it
 * does not cite as signed); `BadArchive` when the record and signed members pass maxHeldBytes.
 * `input` is the archive's bytes, or a reader of them: read member by member, so a bad member is
 * refused without reading what follows it, and plain objects staged on disk as they are read
 * (staged.ts): the caller disposes of them (`plain.dispose()`) once done; a refusal does here.
 */
export function openRunArchive(input: Uint8Array | ReadInto, hosts?: readonly string[]): OpenedArchive {
  const plain = input instanceof Uint8Array ? inMemory() : staged();
  try {
    return openInto(input, plain, hosts);
  } catch (e) {
    plain.dispose();
    throw e;
  }
}

function openInto(
  input: Uint8Array | ReadInto,
  plain: PlainHolder,
  hosts: readonly string[] | undefined,
): OpenedArchive {
  const o = {
    record: null as [Digest, Uint8Array] | null,
    plain,
    signed: new Map<Digest, Envelope>(),
  };
  const st = { first: true, held: 0 };
  const onHeader = (name: string, size: number): MemberSink | undefined => {
    if (st.first && (name !== RUN_ARCHIVE_FORMAT || size !== 0))
      throw new HostError("BadArchive", `the first member is not ${RUN_ARCHIVE_FORMAT}`);
    if (st.first) return undefined;
    const { kind, address } = memberName(name);
    if (kind === "objects") return plain.sink(name, address);
    st.held += size;
    if (st.held > ARCHIVE_LIMITS.maxHeldBytes)
      throw new HostError(
        "BadArchive",
        `the record and signed members are over ${ARCHIVE_LIMITS.maxHeldBytes} bytes in all`,
      );
    return undefined;
  };
  const onMember = (m: ArchiveMember): void => {
    if (st.first) st.first = false;
    else sortMember(o, m);
  };
  if (input instanceof Uint8Array)
    for (const m of readArchive(input, ARCHIVE_LIMITS)) {
      onHeader(m.name, m.data.length);
      onMember(m);
    }
  else readArchiveStream(input, ARCHIVE_LIMITS, onMember, onHeader);
  if (st.first) throw new HostError("BadArchive", `the first member is not ${RUN_ARCHIVE_FORMAT}`);
  if (o.record === null) throw new HostError("ArchiveIncomplete", "the archive holds no record");
  const [id, record] = o.record;
  const run = verifyRun(
    record,
    { getObject: (a) => o.plain.get(a), getSigned: (a) => o.signed.get(a) ?? null },
    hosts === undefined ? { expectId: id } : { expectId: id, hosts },
  );
  if (!run.valid)
    throw new SandboxAttestError((run.error?.code ?? "BadRecord") as "BadRecord", run.error?.message ?? "");
  if (run.missing.length > 0)
    throw new HostError("ArchiveIncomplete", `the archive lacks ${run.missing.join(", ")}`);
  // Referenced as plain: every plain object the run cites, the unit descriptor named by the record's
  // unit id, what its labels cite, and the nodes of each interval's journal, walked and verified as
  // §13.7.3 reads them (journals.ts). As signed: the signed objects the run cites, and nothing else
  // (so an envelope's payload copied in as a plain object is not referenced).
  const used = new Set<Digest>([...run.objects.plain, run.record!.unitId]);
  for (const a of unitCitesOf(o.plain.get(run.record!.unitId))) used.add(a);
  const getPlain = (a: Digest): Uint8Array | null => o.plain.get(a);
  for (const a of journalNodesOf(run.record!, (x) => o.signed.get(x) ?? null, getPlain).keys()) used.add(a);
  const usedSigned = new Set<Digest>(run.objects.signed);
  for (const a of o.plain.addresses())
    if (!used.has(a)) throw new HostError("UnexpectedMember", `object ${a} is not referenced by the run`);
  for (const a of o.signed.keys())
    if (!usedSigned.has(a))
      throw new HostError("UnexpectedMember", `signed object ${a} is not referenced by the run`);
  return { id, record, run, plain: o.plain, signed: o.signed };
}

/** What an import did. */
export interface ImportResult {
  readonly id: Digest;
  readonly head: Digest;
  /** False when the store already held exactly this record. */
  readonly created: boolean;
  readonly objects: number;
  /** Every did:key whose signature was checked on the run's objects. */
  readonly signers: readonly string[];
}

/**
 * importRunArchive verifies `input` (openRunArchive, nothing written before it passes), then
 * imports it (importOpenedArchive). `store` may be a function that opens it: it is called only once
 * the archive has verified, so a refused import never creates a store.
 */
export async function importRunArchive(
  store: FileStore | (() => FileStore),
  input: Uint8Array | ReadInto,
  hosts?: readonly string[],
): Promise<ImportResult> {
  const a = openRunArchive(input, hosts);
  try {
    return await importOpenedArchive(typeof store === "function" ? store() : store, a);
  } finally {
    a.plain.dispose();
  }
}

/**
 * importOpenedArchive stores a verified archive's objects durably and publishes the record last,
 * atomically. A store holding a record of the same id with other bytes refuses it (`RecordExists`),
 * checked before anything is written; the same bytes are already imported.
 */
export async function importOpenedArchive(store: FileStore, a: OpenedArchive): Promise<ImportResult> {
  const held = await store.readRecordBytes(a.id);
  refuseMovedAway(a.id, held);
  if (held !== null && !bytesEqual(held, a.record))
    throw new SandboxAttestError("RecordExists", `the store holds another record ${a.id}`);
  for (const x of a.plain.addresses()) store.putObjectSync(a.plain.get(x)!, true);
  store.syncPending();
  for (const env of a.signed.values()) await store.putSigned(env);
  const created = store.importRecordSync(a.id, a.record);
  const objects = a.plain.size + a.signed.size;
  return { id: a.id, head: a.run.record!.head, created, objects, signers: a.run.signers };
}
