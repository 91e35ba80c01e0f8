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
import { RUNRECORD_TAG, RunRecord, runGenesis } from "./record.ts";
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

function appendLine(r: RunRecord, l: Line, n: number): void {
  const line = n + 1;
  const o = l.value;
  if (Object.keys(o).sort().join(",") !== "head,n,segment" || o.n !== n || !isDigest(o.head))
    badLine(line, `not segment line n=${n}`);
  // The line is canonical exactly when it equals the wrapper rebuilt around the segment's JCS text,
  // which is also the hash input: one canonicalisation serves both checks.
  const segText = canonicalText(o.segment ?? null, line);
  if (l.text !== `{"head":"${o.head}","n":${n},"segment":${segText}}`) badLine(line, "not in canonical form");
  let head: Digest;
  try {
    head = r.append(parseSegment(o.segment), utf8(segText));
  } catch (e) {
    if (isSandboxAttestError(e))
      throw new SandboxAttestError(e.code, `line ${line}: ${e.message.replace(/^\w+: /, "")}`, { cause: e });
    throw e;
  }
  if (head !== o.head)
    throw new SandboxAttestError("HeadMismatch", `line ${line}: recomputed head ${head}, stated ${o.head}`);
}

/**
 * decodeRecord reads and verifies a record file from genesis (§13.4, §13.5): the header
 * (`BadRecord`, `GenesisMismatch`), every line's canonical form and member set (`BadRecord`), every
 * segment (`BadSegment` and the §13.3 codes) and every stated head (`HeadMismatch`). A tail after the
 * last line feed is refused as `TornRecord` unless `allowTorn`; an empty file is `BadRecord`.
 */
export function decodeRecord(bytes: Uint8Array, opts: DecodeOptions = {}): DecodedRecord {
  const lineEnds: number[] = [];
  let record: RunRecord | null = null;
  let start = 0;
  while (start < bytes.length) {
    const nl = bytes.indexOf(LF, start);
    if (nl < 0) break;
    const l = parseLine(bytes.subarray(start, nl), lineEnds.length + 1);
    if (record === null) {
      if (canonicalText(l.value, 1) !== l.text) badLine(1, "not in canonical form");
      const h = parseHeader(l.value, opts);
      record = RunRecord.create(h.unit_id, h.grants_id);
    } else appendLine(record, l, lineEnds.length);
    lineEnds.push(nl + 1);
    start = nl + 1;
  }
  const tornBytes = bytes.length - start;
  if (tornBytes > 0 && (record === null || opts.allowTorn !== true))
    throw new SandboxAttestError("TornRecord", `${tornBytes} bytes after the last complete line`);
  if (record === null) throw new SandboxAttestError("BadRecord", "empty record file");
  return { record, lineEnds, tornBytes };
}
