// §13.5 The wire form of a run record: a UTF-8 file of lines, each the JCS text of one object and a
// line feed. Line 1 is the header binding the ids and head₀; line n+1 carries segment n and headₙ.
// Every byte is either checked structure or covered by a head that is recomputed and compared, so a
// single changed byte anywhere is refused; a tail without its line feed is a torn append.
import {
  canonicalBytes,
  canonicalize,
  concatBytes,
  isDigest,
  parseStrict,
  utf8,
  type Digest,
  type Json,
} from "@sbx/wire";
import { SandboxAttestError, isSandboxAttestError } from "../errors.ts";
import { createChecked, RUNRECORD_TAG, RunRecord, runGenesis } from "./record.ts";
import { appendExecutedLines, readSegmentLine } from "./line.ts";
import { parseSegment, type Segment } from "./segment.ts";

/** The longest line accepted, in bytes (segments are small; this bounds work on hostile input). */
export const RECORD_LINE_MAX = 64 * 1024;
const LF = 0x0a;

/** The header of a record file. */
export interface RecordHeader {
  readonly format: typeof RUNRECORD_TAG;
  readonly unit_id: Digest;
  readonly grants_id: Digest;
  readonly head: Digest;
}

/** What decoding a record file yields. */
export interface DecodedRecord {
  readonly record: RunRecord;
  /** Byte offset just past each complete line: the header's first, then one per segment. */
  readonly lineEnds: readonly number[];
  /** Bytes after the last complete line (a torn append); 0 for a clean file. */
  readonly tornBytes: number;
}

/** Options for decodeRecord. */
export interface DecodeOptions {
  /** Accept a torn tail and report it in `tornBytes` instead of refusing (`TornRecord`). */
  readonly allowTorn?: boolean;
  /** When given, the header must bind these ids (`GenesisMismatch`), so nothing can be spliced in. */
  readonly unitId?: Digest;
  readonly grantsId?: Digest;
  /** When given, after every line verifies: the record's id (head₀) must be this (`GenesisMismatch`). */
  readonly expectGenesis?: Digest;
  /**
   * When given, after every line verifies and the id: the record must end at this head, the one its
   * holder stated (`HeadMismatch`), so a record cut back at a line boundary is refused.
   */
  readonly expectHead?: Digest;
}

/** encodeHeader returns the header line of a new record of `unitId` under `grantsId` (§13.5). */
export function encodeHeader(unitId: Digest, grantsId: Digest): Uint8Array {
  const h: RecordHeader = {
    format: RUNRECORD_TAG,
    unit_id: unitId,
    grants_id: grantsId,
    head: runGenesis(unitId, grantsId),
  };
  return concatBytes(canonicalBytes(h), Uint8Array.of(LF));
}

/** encodeSegmentLine returns the line of segment `n` (1-based) whose chain head is `head` (§13.5). */
export function encodeSegmentLine(n: number, head: Digest, seg: Segment): Uint8Array {
  return concatBytes(canonicalBytes({ head, n, segment: seg }), Uint8Array.of(LF));
}

/** encodeRecord returns the whole wire form of a record. */
export function encodeRecord(r: RunRecord): Uint8Array {
  const lines = [encodeHeader(r.unitId, r.grantsId)];
  r.segments.forEach((s, i) => lines.push(encodeSegmentLine(i + 1, r.heads[i + 1]!, s)));
  return concatBytes(...lines);
}

function badLine(line: number, msg: string): never {
  throw new SandboxAttestError("BadRecord", `line ${line}: ${msg}`);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A parsed line and its text; the caller checks that the text is the canonical form. */
interface Line {
  readonly value: Record<string, Json>;
  readonly text: string;
}

function parseLine(bytes: Uint8Array, line: number): Line {
  if (bytes.length > RECORD_LINE_MAX) badLine(line, `longer than ${RECORD_LINE_MAX} bytes`);
  let text: string;
  let v: Json;
  try {
    text = strictUtf8.decode(bytes);
    v = parseStrict(text, { maxBytes: RECORD_LINE_MAX });
  } catch (e) {
    return badLine(line, `not one JSON object (${(e as { code?: string }).code ?? "InvalidUtf8"})`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) badLine(line, "not a JSON object");
  return { value: v, text };
}

function canonicalText(v: Json, line: number): string {
  try {
    return canonicalize(v);
  } catch (e) {
    return badLine(line, `not canonical JSON (${(e as { code?: string }).code ?? "?"})`);
  }
}

function parseHeader(o: Record<string, Json>, opts: DecodeOptions): RecordHeader {
  const keys = Object.keys(o).sort().join(",");
  if (keys !== "format,grants_id,head,unit_id" || o.format !== RUNRECORD_TAG)
    badLine(1, `not a ${RUNRECORD_TAG} header`);
  if (!isDigest(o.unit_id) || !isDigest(o.grants_id) || !isDigest(o.head))
    badLine(1, "ids and head must be digests");
  if (runGenesis(o.unit_id, o.grants_id) !== o.head)
    throw new SandboxAttestError("GenesisMismatch", "header head is not head₀ of its unit and grant set");
  if (
    (opts.unitId !== undefined && opts.unitId !== o.unit_id) ||
    (opts.grantsId !== undefined && opts.grantsId !== o.grants_id)
  )
    throw new SandboxAttestError("GenesisMismatch", "record binds a different unit or grant set");
  return { format: RUNRECORD_TAG, unit_id: o.unit_id, grants_id: o.grants_id, head: o.head };
}

// The header line parsed strictly: every refusal of a header is made here.
function strictHeader(bytes: Uint8Array, opts: DecodeOptions): RunRecord {
  const l = parseLine(bytes, 1);
  if (canonicalText(l.value, 1) !== l.text) badLine(1, "not in canonical form");
  const h = parseHeader(l.value, opts);
  return createChecked(h.unit_id, h.grants_id, h.head);
}

// The header a writer makes (encodeHeader), byte for byte: its members in JCS order, each id a
// digest of 64 lower-case hex digits. Offsets are fixed: the ids start after these prefixes.
const H_GRANTS = `{"format":"${RUNRECORD_TAG}","grants_id":"`;
const H_HEAD = `","head":"`;
const H_UNIT = `","unit_id":"`;
const H_END = `"}`;
const DIGEST_LEN = "blake3:".length + 64;
const HEADER_LEN = H_GRANTS.length + H_HEAD.length + H_UNIT.length + H_END.length + 3 * DIGEST_LEN;

/**
 * readHeaderLine is the fast reader of line 1 (bytes[0, nl)): when the line is exactly the header
 * encodeHeader writes for ids that bind (head = head₀ of the ids, and the ids `opts` names), the
 * record at head₀; null for anything else, which the strict reader then reads and refuses. Only a
 * line equal to its own canonical form is accepted, so both readers accept exactly the same headers.
 */
function readHeaderLine(bytes: Uint8Array, nl: number, opts: DecodeOptions): RunRecord | null {
  if (nl !== HEADER_LEN) return null;
  const text = byteText(bytes.subarray(0, nl), 0);
  const g = H_GRANTS.length;
  const h = g + DIGEST_LEN + H_HEAD.length;
  const u = h + DIGEST_LEN + H_UNIT.length;
  if (
    !text.startsWith(H_GRANTS) ||
    !text.startsWith(H_HEAD, g + DIGEST_LEN) ||
    !text.startsWith(H_UNIT, h + DIGEST_LEN) ||
    !text.startsWith(H_END, u + DIGEST_LEN)
  )
    return null;
  const grantsId = text.slice(g, g + DIGEST_LEN);
  const head = text.slice(h, h + DIGEST_LEN);
  const unitId = text.slice(u, u + DIGEST_LEN);
  if (!isDigest(grantsId) || !isDigest(head) || !isDigest(unitId)) return null;
  if (
    (opts.unitId !== undefined && opts.unitId !== unitId) ||
    (opts.grantsId !== undefined && opts.grantsId !== grantsId)
  )
    return null;
  const genesis = runGenesis(unitId, grantsId);
  return genesis === head ? createChecked(unitId, grantsId, genesis) : null;
}

// Appends segment n to `r` and checks the head the line states; a refusal names the line.
function commit(r: RunRecord, seg: Segment, canonical: Uint8Array, stated: Digest, n: number): void {
  const line = n + 1;
  let head: Digest | null;
  try {
    head = r.appendStated(seg, canonical, stated);
  } catch (e) {
    if (isSandboxAttestError(e))
      throw new SandboxAttestError(e.code, `line ${line}: ${e.reason}`, { cause: e, members: e.members });
    throw e;
  }
  if (head !== null)
    throw new SandboxAttestError("HeadMismatch", `line ${line}: recomputed head ${head}, stated ${stated}`);
}

// The strict reader: any line the fast reader (line.ts) did not accept, so every refusal is made here.
function appendStrict(r: RunRecord, bytes: Uint8Array, n: number): void {
  const line = n + 1;
  const l = parseLine(bytes, line);
  const o = l.value;
  if (Object.keys(o).sort().join(",") !== "head,n,segment" || o.n !== n || !isDigest(o.head))
    badLine(line, `not segment line n=${n}`);
  // The line is canonical exactly when it equals the wrapper rebuilt around the segment's JCS text,
  // which is also the hash input: one canonicalisation serves both checks.
  const segText = canonicalText(o.segment ?? null, line);
  if (l.text !== `{"head":"${o.head}","n":${n},"segment":${segText}}`) badLine(line, "not in canonical form");
  commit(r, parseSegment(o.segment), utf8(segText), o.head, n);
}

function appendFast(r: RunRecord, bytes: Uint8Array, n: number): boolean {
  const fast = readSegmentLine(bytes, n);
  try {
    return fast !== null && r.appendStated(fast.seg, fast.canonical, fast.head) === null;
  } catch {
    return false;
  }
}

function appendLine(r: RunRecord, bytes: Uint8Array, n: number): void {
  if (bytes.length > RECORD_LINE_MAX) badLine(n + 1, `longer than ${RECORD_LINE_MAX} bytes`);
  // A refusal is always the strict reader's: on any doubt the fast result is dropped, unappended.
  if (!appendFast(r, bytes, n)) appendStrict(r, bytes, n);
}

// Node's Buffer where present (its latin1 decoding is a copy); a TextDecoder elsewhere.
const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;
const latin1 = new TextDecoder("latin1");

// bytes[from…] as text of one UTF-16 code unit per byte (latin1), so text offsets are byte offsets.
// Only its ASCII parts are used (the fast reader slices strings out of byte ranges it has checked to
// be ASCII), so what it makes of other bytes does not matter, and no line is accepted because of it.
function byteText(bytes: Uint8Array, from: number): string {
  if (NodeBuffer !== undefined)
    return NodeBuffer.from(bytes.buffer, bytes.byteOffset + from, bytes.length - from).toString("latin1");
  return latin1.decode(bytes.subarray(from));
}

// Appends every complete line from `start`; returns the offset past the last one.
function appendLines(record: RunRecord, bytes: Uint8Array, start: number, ends: number[] | null): number {
  const text = byteText(bytes, start);
  let at = start;
  for (;;) {
    at = appendExecutedLines(record, bytes, text, start, at, ends);
    const nl = bytes.indexOf(LF, at);
    if (nl < 0) return at;
    appendLine(record, bytes.subarray(at, nl), record.segments.length + 1);
    at = nl + 1;
    ends?.push(at);
  }
}

/** What continueRecord yields: the byte offset past the last complete line, and the torn tail's length. */
export interface Continued {
  readonly end: number;
  readonly tornBytes: number;
}

/**
 * continueRecord verifies the lines of `bytes` from offset `start` (a line boundary) as the
 * continuation of `record`, appending each segment to it (§13.4 from a verified head: what precedes
 * `start` is not read again). Same refusals as decodeRecord; a torn tail is refused (`TornRecord`)
 * unless `allowTorn`. A refusal leaves `record` holding the lines before the refused one.
 */
export function continueRecord(
  record: RunRecord,
  bytes: Uint8Array,
  start: number,
  allowTorn = false,
): Continued {
  const at = appendLines(record, bytes, start, null);
  const tornBytes = bytes.length - at;
  if (tornBytes > 0 && !allowTorn)
    throw new SandboxAttestError("TornRecord", `${tornBytes} bytes after the last complete line`);
  return { end: at, tornBytes };
}

/**
 * decodeRecord reads and verifies a record file from genesis (§13.4, §13.5): the header
 * (`BadRecord`, `GenesisMismatch`), every line's canonical form and member set (`BadRecord`), every
 * segment (`BadSegment` and the §13.3 codes) and every stated head (`HeadMismatch`). A tail after the
 * last line feed is refused as `TornRecord` unless `allowTorn`; an empty file is `BadRecord`.
 */
export function decodeRecord(bytes: Uint8Array, opts: DecodeOptions = {}): DecodedRecord {
  const nl = bytes.indexOf(LF);
  if (nl < 0) {
    if (bytes.length > 0)
      throw new SandboxAttestError("TornRecord", `${bytes.length} bytes after the last complete line`);
    throw new SandboxAttestError("BadRecord", "empty record file");
  }
  const record = readHeaderLine(bytes, nl, opts) ?? strictHeader(bytes.subarray(0, nl), opts);
  const lineEnds: number[] = [nl + 1];
  const start = appendLines(record, bytes, nl + 1, lineEnds);
  const tornBytes = bytes.length - start;
  if (tornBytes > 0 && opts.allowTorn !== true)
    throw new SandboxAttestError("TornRecord", `${tornBytes} bytes after the last complete line`);
  checkExpected(record, opts);
  return { record, lineEnds, tornBytes };
}

// The ids and head a caller states for a record that verified (§13.5): `GenesisMismatch`, `HeadMismatch`.
function checkExpected(record: RunRecord, opts: DecodeOptions): void {
  if (opts.expectGenesis !== undefined && record.genesis !== opts.expectGenesis)
    throw new SandboxAttestError(
      "GenesisMismatch",
      `record has id ${record.genesis}, expected ${opts.expectGenesis}`,
    );
  if (opts.expectHead !== undefined && record.head !== opts.expectHead)
    throw new SandboxAttestError(
      "HeadMismatch",
      `record ends at ${record.head}, expected ${opts.expectHead}`,
    );
}
