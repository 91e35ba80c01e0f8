// §13.7 Run records in the file-backed store. Layout: records/<genesis hex>.runrecord (the §13.5 wire
// form) and records/<genesis hex>.claims/<head hex>, one claim per head.
//
// Compare-and-append: to extend head H, a writer first publishes its complete line as the claim file
// for H with link(2), which fails when the name exists, so exactly one writer ever extends H; the
// loser gets AppendConflict. Only then does the winner write the line at the byte offset where H ends
// and fsync. A crash after the claim leaves a committed segment that the next opener completes by
// writing the claimed line at the same offset (idempotent: same bytes, same place). Bytes past the
// last complete line with no claim behind them are not ours: they are cut back and reported.
//
// Readers never write: they settle in memory (the claimed line in place of a missing or torn one,
// unclaimed torn bytes left out), so verification and listing work on a read-only store. Settling
// the file itself belongs to the next writer. Once its claim is linked an append is committed:
// a later failure (a full disk while writing the line) is left for the next writer to complete from
// the claim, and the caller is told the append succeeded, because it did.
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
} from "node:fs";
import { join } from "node:path";
import { concatBytes, parseDigest, toHex, type Digest } from "@sbx/wire";
import {
  decodeRecord,
  encodeHeader,
  encodeSegmentLine,
  runGenesis,
  SandboxAttestError,
  segmentHead,
  type DecodedRecord,
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

function claimFor(claims: string, head: Digest): Uint8Array | null {
  const p = join(claims, toHex(parseDigest(head)));
  return existsSync(p) ? readFileSync(p) : null;
}

/** checkClaim refuses a claim that is not one complete, valid continuation of the record (`BadRecord`). */
function checkClaim(prefix: Uint8Array, claim: Uint8Array): void {
  try {
    decodeRecord(concatBytes(prefix, claim));
  } catch (e) {
    throw new SandboxAttestError("BadRecord", "a claim file is not a valid continuation of its record", {
      cause: e,
    });
  }
}

/** The decoded record plus whether the file had to change; the fd stays open for the caller. */
function settleFd(fd: number, claims: string, id: Digest): { decoded: DecodedRecord; report: SettleReport } {
  let rolledForward = 0;
  let cutBytes = 0;
  for (;;) {
    const decoded = decodeRecord(readAll(fd), { allowTorn: true });
    if (decoded.record.genesis !== id)
      throw new SandboxAttestError(
        "GenesisMismatch",
        `record file for ${id} has genesis ${decoded.record.genesis}`,
      );
    const end = decoded.lineEnds.at(-1)!;
    const claim = decoded.record.phase === "closed" ? null : claimFor(claims, decoded.record.head);
    if (claim !== null) {
      checkClaim(readAll(fd).subarray(0, end), claim);
      writeFully(fd, claim, end, "roll-forward");
      faultPoint("fsync-record");
      fsyncSync(fd);
      rolledForward++;
      continue; // the claimed line is verified by decoding it as part of the record
    }
    if (decoded.tornBytes > 0) {
      faultPoint("cut-torn");
      ftruncateSync(fd, end);
      fsyncSync(fd);
      cutBytes += decoded.tornBytes;
      continue;
    }
    return { decoded, report: { rolledForward, cutBytes } };
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
  const { fd, claims } = openRecord(root, id, "r");
  let bytes: Uint8Array;
  try {
    bytes = readAll(fd);
  } finally {
    closeSync(fd);
  }
  let rolledForward = 0;
  let cutBytes = 0;
  for (;;) {
    const decoded = decodeRecord(bytes, { allowTorn: true });
    if (decoded.record.genesis !== id)
      throw new SandboxAttestError(
        "GenesisMismatch",
        `record file for ${id} has genesis ${decoded.record.genesis}`,
      );
    const prefix = bytes.subarray(0, decoded.lineEnds.at(-1));
    const claim = decoded.record.phase === "closed" ? null : claimFor(claims, decoded.record.head);
    if (claim !== null) {
      checkClaim(prefix, claim);
      bytes = concatBytes(prefix, claim);
      rolledForward++;
    } else if (decoded.tornBytes > 0) {
      cutBytes += decoded.tornBytes;
      bytes = prefix;
    } else return { bytes, report: { rolledForward, cutBytes } };
  }
}

/** settleRecord (a writer) completes claimed appends and cuts unclaimed torn bytes in the file itself. */
export function settleRecord(
  root: string,
  id: Digest,
): { decoded: DecodedRecord; report: SettleReport; bytes: Uint8Array } {
  const { fd, claims } = openRecord(root, id);
  try {
    const r = settleFd(fd, claims, id);
    return { ...r, bytes: readAll(fd) };
  } finally {
    closeSync(fd);
  }
}

// The claim is linked: the segment is committed. Writing it into the record is completion, which
// the next writer redoes from the claim if it fails here (ENOSPC, EIO): never reported as failure.
function completeLine(fd: number, claims: string, line: Uint8Array, at: number): void {
  try {
    fsyncDir(claims);
    writeFully(fd, line, at, "append");
    faultPoint("fsync-record");
    fsyncSync(fd);
  } catch {
    /* committed by the claim; the record file is completed from it by the next writer */
  }
}

/**
 * appendRecordLine appends `seg` if the head is still `expected` (`StaleHead` otherwise), after the
 * §13.3 checks; claims the head with link(2) (`AppendConflict` when another writer holds it, even
 * with the same bytes), then writes the line where the head ends and fsyncs. Returns the new head
 * once the claim is linked (committed); a failure before that throws and nothing was committed.
 */
export function appendRecordLine(root: string, id: Digest, expected: Digest, seg: Segment): Digest {
  const { fd, claims } = openRecord(root, id);
  try {
    const { decoded } = settleFd(fd, claims, id);
    const { record } = decoded;
    if (record.head !== expected)
      throw new SandboxAttestError("StaleHead", `head is ${record.head}, expected ${expected}`);
    record.check(seg);
    const head = segmentHead(record.head, seg);
    const line = encodeSegmentLine(record.segments.length + 1, head, seg);
    const tmp = writeTemp(join(root, "tmp"), line);
    // Ours only if our own link(2) made the claim: identical bytes from another writer are not ours.
    if (!publishExclusive(tmp, join(claims, toHex(parseDigest(expected)))))
      throw new SandboxAttestError("AppendConflict", `another writer extended head ${expected}`);
    completeLine(fd, claims, line, decoded.lineEnds.at(-1)!);
    return head;
  } finally {
    closeSync(fd);
  }
}
