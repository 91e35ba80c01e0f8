// §13.7 Run records in the file-backed store. Layout: records/<genesis hex>.runrecord (the §13.5 wire
// form) and records/<genesis hex>.claims/<head hex>[.k], the claim slots of each head.
//
// Compare-and-append: to extend head H, a writer publishes its complete line as H's first free
// claim slot with one call that fails when the name exists, so exactly one writer ever extends H;
// the loser gets AppendConflict. On a local filesystem the claim is a symbolic link whose target is
// the line (symlink(2): created whole, nothing to write, sync or remove after it); a long line, or a
// filesystem not known to be local, takes a temp file linked with link(2) and owned by its inode
// (durable.ts publishExclusive). Readers take either form. Only then does the winner write
// the line at the byte offset where H ends and fsync the record: one fsync per append, and the
// acknowledgement comes after it, so an acknowledged segment is in the record file itself. A claim
// is the line a writer is completing: a writer killed after its claim leaves a complete claim, which
// the next opener writes into the record at the same offset (idempotent: same bytes, same place).
// The claim's bytes are not fsynced before the link, so after a crash of the machine a slot can
// hold less than a line (a claim is always linked whole, so only a crash leaves it incomplete). An
// incomplete slot committed nothing — its writer had not yet made the record durable, so nothing was
// acknowledged — and is passed over for the next slot, <head hex>.1, .2 …; a complete claim that
// is not a valid continuation is refused (BadRecord), never passed over. Bytes past the last
// complete line with no claim behind them are not ours: they are cut back and reported.
//
// Appends start from the verified head: a FileStore keeps, per record, the state it verified and
// the offset it ends at; the next append reads only what lies past that offset (nothing, unless
// another writer appended). Under this protocol the bytes before a verified offset never change (a
// writer only writes at the end, and only cuts unclaimed bytes past the last complete line), so an
// append is O(1) in the record's length; tampering with them is what §13.9 verification catches.
//
// Readers never write: they settle in memory (the claimed line in place of a missing or torn one,
// unclaimed torn bytes left out), so verification and listing work on a read-only store. Settling
// the file itself belongs to the next writer. Once its claim is linked an append is committed:
// a later failure (a full disk while writing the line) is made durable from the claim (its file
// and folder fsynced), left for the next writer to complete, and the caller is told the append
// succeeded, because it did.
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readlinkSync,
  readSync,
  statfsSync,
  symlinkSync,
} from "node:fs";
import { join } from "node:path";
import { concatBytes, parseDigest, toHex, type Digest } from "@sbx/wire";
import {
  continueRecord,
  decodeRecord,
  encodeHeader,
  encodeSegmentLine,
  runGenesis,
  SandboxAttestError,
  segmentHead,
  type RunRecord,
  type Segment,
} from "@sbx/sandbox-attest/runrecord";
import { HostError } from "../errors.ts";
import { fsyncDir, publishExclusive, writeTemp } from "./durable.ts";
import { faultPoint, writeFully } from "./fault.ts";

/** What settling a record did: segments completed from their claims, torn bytes cut. */
export interface SettleReport {
  readonly rolledForward: number;
  readonly cutBytes: number;
}

/** Paths of one record in a store rooted at `root`. */
export function recordPaths(root: string, id: Digest): { file: string; claims: string } {
  const hex = toHex(parseDigest(id));
  return { file: join(root, "records", `${hex}.runrecord`), claims: join(root, "records", `${hex}.claims`) };
}

function readAll(fd: number): Uint8Array {
  const size = fstatSync(fd).size;
  const buf = new Uint8Array(size);
  let off = 0;
  while (off < size) {
    const n = readSync(fd, buf, off, size - off, off);
    if (n === 0) break;
    off += n;
  }
  return buf.subarray(0, off);
}

/** createRecordFile publishes a new record's header atomically; `RecordExists` when taken. */
export function createRecordFile(root: string, unitId: Digest, grantsId: Digest): Digest {
  const id = runGenesis(unitId, grantsId);
  const { file, claims } = recordPaths(root, id);
  mkdirSync(claims, { recursive: true });
  const tmp = writeTemp(join(root, "tmp"), encodeHeader(unitId, grantsId));
  if (!publishExclusive(tmp, file)) throw new SandboxAttestError("RecordExists", `record ${id} exists`);
  fsyncDir(join(root, "records"));
  return id;
}

/**
 * importRecordFile publishes a whole record (verified by the caller) atomically: written to a temp
 * file, fsynced, linked into place only if the name is free, its folder fsynced. Returns true when
 * published, false when the store holds exactly these bytes already; `RecordExists` when it holds
 * another record under this id.
 */
export function importRecordFile(root: string, id: Digest, bytes: Uint8Array): boolean {
  const { file, claims } = recordPaths(root, id);
  mkdirSync(claims, { recursive: true });
  const tmp = writeTemp(join(root, "tmp"), bytes);
  if (publishExclusive(tmp, file)) {
    fsyncDir(join(root, "records"));
    return true;
  }
  const held = readSettled(root, id).bytes;
  if (Buffer.compare(held, bytes) === 0) return false;
  throw new SandboxAttestError("RecordExists", `the store holds another record ${id}`);
}

/** A record as a writer verified it: its state, the offset its last complete line ends at, its file. */
export interface VerifiedRecord {
  readonly record: RunRecord;
  end: number;
  readonly ino: bigint;
  readonly dev: bigint;
}

/** The most claim slots a head may have: only crashes of the machine leave void ones. */
const MAX_SLOTS = 64;

function slotPath(claims: string, head: Digest, k: number): string {
  const hex = toHex(parseDigest(head));
  return join(claims, k === 0 ? hex : `${hex}.${k}`);
}

/**
 * readClaim returns what a claim slot holds, or null when it is free. A claim is either a symbolic
 * link whose target is the line (what writers make where symlinkClaims allows) or a regular file
 * holding it (the linked temp file of the other path, and of stores written before); a claim file
 * is opened without following links, so a slot can never make a reader read another file.
 */
function readClaim(path: string): Uint8Array | null {
  try {
    return readlinkSync(path, { encoding: "buffer" });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code !== "EINVAL") throw e; // EINVAL: not a symbolic link, so a claim file
  }
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
  try {
    return readAll(fd);
  } finally {
    closeSync(fd);
  }
}

/** The longest line written as a symbolic link's target (well under every local filesystem's limit). */
const SYMLINK_CLAIM_MAX = 1000;

// Filesystems whose symlink(2) reports EEXIST only for a name that existed before the call (local
// ones; a retransmitted NFS request can report EEXIST for the name its own first try made).
const LOCAL_FS = new Set([
  0xef53, // ext2/3/4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs
  0x2fc12fc1, // zfs
  0xf2f52010, // f2fs
]);
const claimKind = new Map<string, boolean>();

/**
 * symlinkClaims: may claims under `claims` be made as symbolic links? Only on a local filesystem,
 * where symlink(2) succeeds exactly when this call made the name, so success is ownership. Elsewhere
 * the writer links its own temp file and decides ownership by inode (publishExclusive).
 */
function symlinkClaims(claims: string): boolean {
  let ok = claimKind.get(claims);
  if (ok === undefined) {
    try {
      ok = LOCAL_FS.has(statfsSync(claims).type);
    } catch {
      ok = false;
    }
    claimKind.set(claims, ok);
  }
  return ok;
}

/**
 * publishClaim makes `line` the claim at `slot` if the slot is free: true when this writer made it,
 * false when another writer's claim is there (AppendConflict). A symbolic link whose target is the
 * line is one atomic, exclusive call that creates the claim whole (nothing to write, sync or remove
 * after it); a long line or a filesystem that is not known to be local takes the temp-file path.
 */
function publishClaim(root: string, claims: string, slot: string, line: Uint8Array): boolean {
  if (line.length <= SYMLINK_CLAIM_MAX && symlinkClaims(claims)) {
    try {
      faultPoint("claim");
      symlinkSync(Buffer.from(line.buffer, line.byteOffset, line.length), slot);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw e;
    }
  }
  return publishExclusive(writeTemp(join(root, "tmp"), line, 0o444, false), slot);
}

/** What the claim slots of a head hold: a complete claim, or the first free slot. */
type Slot =
  { readonly claim: Uint8Array; readonly path: string } | { readonly claim: null; readonly path: string };

/** findSlot returns the first complete claim of `head`, passing over incomplete (void) slots, or the first free slot. */
function findSlot(claims: string, head: Digest): Slot {
  for (let k = 0; k < MAX_SLOTS; k++) {
    const path = slotPath(claims, head, k);
    const claim = readClaim(path);
    if (claim === null) return { claim: null, path };
    if (claim.length > 0 && claim[claim.length - 1] === 0x0a) return { claim, path };
  }
  throw new SandboxAttestError("BadRecord", `head ${head} has ${MAX_SLOTS} void claim slots`);
}

/** continueWith verifies a complete claim as the next line of `v` (`BadRecord` when it is not) and returns the state after it. */
function continueWith(v: VerifiedRecord, claim: Uint8Array): RunRecord {
  const next = v.record.fork();
  try {
    continueRecord(next, claim, 0);
  } catch (e) {
    throw new SandboxAttestError("BadRecord", "a claim file is not a valid continuation of its record", {
      cause: e,
    });
  }
  if (next.segments.length !== v.record.segments.length + 1)
    throw new SandboxAttestError("BadRecord", "a claim file holds more than one line");
  return next;
}

function readFrom(fd: number, from: number, to: number): Uint8Array {
  const buf = new Uint8Array(Math.max(0, to - from));
  let off = 0;
  while (off < buf.length) {
    const n = readSync(fd, buf, off, buf.length - off, from + off);
    if (n === 0) break;
    off += n;
  }
  return buf.subarray(0, off);
}

/** verifyFd brings `cached` up to the file's end (or verifies the file from genesis): returns the state and the torn tail's length. */
function verifyFd(
  fd: number,
  id: Digest,
  cached: VerifiedRecord | null,
): { v: VerifiedRecord; torn: number } {
  const st = fstatSync(fd, { bigint: true });
  const size = Number(st.size);
  if (cached !== null && cached.ino === st.ino && cached.dev === st.dev && size >= cached.end) {
    const c = continueRecord(cached.record, readFrom(fd, cached.end, size), 0, true);
    cached.end += c.end;
    return { v: cached, torn: c.tornBytes };
  }
  const decoded = decodeRecord(readFrom(fd, 0, size), { allowTorn: true });
  if (decoded.record.genesis !== id)
    throw new SandboxAttestError(
      "GenesisMismatch",
      `record file for ${id} has genesis ${decoded.record.genesis}`,
    );
  const v = { record: decoded.record, end: decoded.lineEnds.at(-1)!, ino: st.ino, dev: st.dev };
  return { v, torn: decoded.tornBytes };
}

/** What settling the file found: the verified state, the free claim slot of its head, what it did. */
interface Settled {
  readonly v: VerifiedRecord;
  readonly slot: string | null;
  readonly report: SettleReport;
}

/** settleFd completes claimed appends and cuts unclaimed torn bytes in the file; the fd stays open. */
function settleFd(fd: number, claims: string, id: Digest, cached: VerifiedRecord | null): Settled {
  let rolledForward = 0;
  let cutBytes = 0;
  let state = verifyFd(fd, id, cached);
  for (;;) {
    const { v, torn } = state;
    const slot = v.record.phase === "closed" ? null : findSlot(claims, v.record.head);
    if (slot?.claim != null) {
      const next = continueWith(v, slot.claim);
      writeFully(fd, slot.claim, v.end, "roll-forward");
      faultPoint("fsync-record");
      fsyncSync(fd);
      rolledForward++;
      state = verifyFd(fd, id, { ...v, record: next, end: v.end + slot.claim.length });
      continue;
    }
    if (torn > 0) {
      faultPoint("cut-torn");
      ftruncateSync(fd, v.end);
      fsyncSync(fd);
      cutBytes += torn;
      state = { v, torn: 0 };
      continue;
    }
    return { v, slot: slot?.path ?? null, report: { rolledForward, cutBytes } };
  }
}

function openRecord(root: string, id: Digest, flags: "r" | "r+" = "r+"): { fd: number; claims: string } {
  const { file, claims } = recordPaths(root, id);
  try {
    return { fd: openSync(file, flags), claims };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new SandboxAttestError("RecordMissing", `no record ${id}`);
    if (flags === "r+")
      throw new HostError("StoreWriteFailed", `record ${id} cannot be opened to append (${code})`, {
        cause: e,
      });
    throw e;
  }
}

/**
 * readSettled reads a record without writing anything: in memory, each claim for the current head
 * takes the place of a missing or torn line and unclaimed torn bytes are left out, exactly as the
 * next writer will settle the file. Returns the record's bytes as settled and what settling did.
 */
export function readSettled(root: string, id: Digest): { bytes: Uint8Array; report: SettleReport } {
  const r = readSettledRecord(root, id);
  return { bytes: r.bytes, report: r.report };
}

/** readSettledRecord is readSettled that also returns the record it verified (decoded once) and the file's identity. */
export function readSettledRecord(
  root: string,
  id: Digest,
): { bytes: Uint8Array; report: SettleReport; record: RunRecord; ino: bigint; dev: bigint } {
  const { fd, claims } = openRecord(root, id, "r");
  let bytes: Uint8Array;
  let st: { ino: bigint; dev: bigint };
  try {
    st = fstatSync(fd, { bigint: true });
    bytes = readAll(fd);
  } finally {
    closeSync(fd);
  }
  const decoded = decodeRecord(bytes, { allowTorn: true });
  if (decoded.record.genesis !== id)
    throw new SandboxAttestError(
      "GenesisMismatch",
      `record file for ${id} has genesis ${decoded.record.genesis}`,
    );
  const v: VerifiedRecord = { record: decoded.record, end: decoded.lineEnds.at(-1)!, ino: 0n, dev: 0n };
  let rolledForward = 0;
  const parts: Uint8Array[] = [bytes.subarray(0, v.end)];
  for (;;) {
    const slot = v.record.phase === "closed" ? null : findSlot(claims, v.record.head);
    if (slot?.claim == null) break;
    const next = continueWith(v, slot.claim);
    parts.push(slot.claim);
    Object.assign(v, { record: next });
    v.end += slot.claim.length;
    rolledForward++;
  }
  const cutBytes = rolledForward > 0 ? 0 : decoded.tornBytes;
  const settled = parts.length === 1 ? parts[0]! : concatBytes(...parts);
  return { bytes: settled, report: { rolledForward, cutBytes }, record: v.record, ino: st.ino, dev: st.dev };
}

/** settleRecord (a writer) completes claimed appends and cuts unclaimed torn bytes in the file itself. */
export function settleRecord(root: string, id: Digest): { report: SettleReport; record: RunRecord } {
  const { fd, claims } = openRecord(root, id);
  try {
    const r = settleFd(fd, claims, id, null);
    return { report: r.report, record: r.v.record };
  } finally {
    closeSync(fd);
  }
}

// The claim is linked: the segment is committed. The line is written into the record and fsynced
// (the acknowledgement's durability). If that fails (ENOSPC, EIO), the claim itself is made durable
// instead and the next writer completes the record from it: never reported as a failure.
function completeLine(fd: number, claim: string, line: Uint8Array, at: number): boolean {
  try {
    writeFully(fd, line, at, "append");
    faultPoint("fsync-record");
    fsyncSync(fd);
    return true;
  } catch {
    try {
      // A claim file's bytes are synced; a symbolic link's target is part of its inode, which the
      // folder's fsync commits with its name.
      const c = openSync(claim, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        fsyncSync(c);
      } finally {
        closeSync(c);
      }
    } catch {
      /* a symbolic link (ELOOP), or it cannot be opened: the folder's fsync below still runs */
    }
    try {
      fsyncDir(join(claim, ".."));
    } catch {
      /* committed by the claim, as far as this host can make it so */
    }
    return false;
  }
}

/**
 * appendRecordLine appends `seg` if the head is still `expected` (`StaleHead` otherwise), after the
 * §13.3 checks, starting from `cache` (the state this store verified before) when it still
 * describes the file; claims the head (publishClaim) (`AppendConflict` when another writer holds it,
 * even with the same bytes), then writes the line where the head ends and fsyncs. Returns the new
 * head once the claim is linked (committed), and the verified state after it (null when the line
 * is left for the next writer); a failure before the link throws and nothing was committed.
 */
export function appendRecordLine(
  root: string,
  id: Digest,
  expected: Digest,
  seg: Segment,
  cache: VerifiedRecord | null = null,
): { head: Digest; verified: VerifiedRecord | null } {
  const { fd, claims } = openRecord(root, id);
  try {
    const { v, slot } = settleFd(fd, claims, id, cache);
    const { record } = v;
    if (record.head !== expected)
      throw new SandboxAttestError("StaleHead", `head is ${record.head}, expected ${expected}`);
    record.check(seg);
    if (slot === null) throw new SandboxAttestError("RecordClosed", "the run is closed");
    const head = segmentHead(record.head, seg);
    const line = encodeSegmentLine(record.segments.length + 1, head, seg);
    // Ours only if our own call made the claim: identical bytes from another writer are not ours.
    if (!publishClaim(root, claims, slot, line))
      throw new SandboxAttestError("AppendConflict", `another writer extended head ${expected}`);
    if (!completeLine(fd, slot, line, v.end)) return { head, verified: null };
    record.append(seg);
    v.end += line.length;
    return { head, verified: v };
  } finally {
    closeSync(fd);
  }
}
