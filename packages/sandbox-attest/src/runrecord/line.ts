// §13.5 The fast reader of one segment line. A line a writer produced is, byte for byte, the text
// {"head":"<digest>","n":<n>,"segment":<JCS of the segment>} and a line feed, so it is checked
// against that template directly: one native JSON.parse of the segment, the strict segment reader,
// and a comparison with the segment's canonical text rebuilt from what was read. A line this reader
// does not accept is not refused here: the strict reader (wire.ts) reads it again and gives the
// refusal, so both readers accept exactly the same lines and refuse with the same codes.
import type { Digest } from "@sbx/wire";
import { isDigest } from "@sbx/wire";
import type { RunRecord } from "./record.ts";
import { parseSegment, type Segment, type SnapshotRef } from "./segment.ts";

/** What the fast reader yields for a line it accepts. */
export interface FastLine {
  readonly seg: Segment;
  /** The segment's JCS bytes (a view into the line): the chain step's input after headₙ₋₁. */
  readonly canonical: Uint8Array;
  /** headₙ as the line states it. */
  readonly head: Digest;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const HEAD_START = '{"head":"'.length;
const HEAD_END = HEAD_START + "blake3:".length + 64;

const str = JSON.stringify;

function snapshotJcs(s: SnapshotRef): string {
  const memory = s.memory === undefined ? "" : `,"memory":"${s.memory}"`;
  return `{"fs_root":"${s.fs_root}","manifest":"${s.manifest}"${memory}}`;
}

function basisJcs(b: Readonly<Record<string, string>>): string {
  // Default sort compares UTF-16 code units, which is the order RFC 8785 §3.2.3 prescribes.
  return `{${Object.keys(b)
    .sort()
    .map((k) => `${str(k)}:${str(b[k])}`)
    .join(",")}}`;
}

/**
 * segmentJcs returns the RFC 8785 text of a segment as parseSegment returns it (members in code-unit
 * order, integers in decimal, strings as JSON.stringify writes them). Precondition: every free string
 * (idle_source, idle_basis keys) is well-formed UTF-16. Tested against `canonicalize`.
 */
export function segmentJcs(s: Segment): string {
  switch (s.kind) {
    case "executed":
      return `{"attestation":"${s.attestation}","kind":"executed"}`;
    case "suspended":
      return `{"at_ms":${s.at_ms},"kind":"suspended","snapshot":${snapshotJcs(s.snapshot)}}`;
    case "closed":
      return `{"at_ms":${s.at_ms},"kind":"closed","outcome":"${s.outcome}"}`;
    case "moved":
      return `{"at_ms":${s.at_ms},"head":"${s.head}","kind":"moved","sig":"${s.sig}","signer":"${s.signer}","to":${str(s.to)}}`;
    case "resumed": {
      const basis = s.idle_basis === undefined ? "" : `"idle_basis":${basisJcs(s.idle_basis)},`;
      return `{"at_ms":${s.at_ms},${basis}"idle_provenance":"${s.idle_provenance}","idle_source":${str(s.idle_source)},"idle_uj":"${s.idle_uj}","kind":"resumed","snapshot":${snapshotJcs(s.snapshot)}}`;
    }
  }
}

function wellFormed(s: Segment): boolean {
  if (s.kind !== "resumed") return true;
  return (
    s.idle_source.isWellFormed() &&
    (s.idle_basis === undefined || Object.keys(s.idle_basis).every((k) => k.isWellFormed()))
  );
}

function parsed(text: string): Segment | null {
  try {
    const s = parseSegment(JSON.parse(text));
    return wellFormed(s) ? s : null;
  } catch {
    return null;
  }
}

const ascii = (t: string): Uint8Array => Uint8Array.from(t, (c) => c.charCodeAt(0));
const P_HEAD = ascii('{"head":"blake3:');
const P_N = ascii('","n":');
const P_ATT = ascii(',"segment":{"attestation":"blake3:');
const P_END = ascii('","kind":"executed"}}');
// 1 for each lowercase hex digit's code.
const HEXCODE = new Uint8Array(256);
for (const c of "0123456789abcdef") HEXCODE[c.charCodeAt(0)] = 1;

function has(b: Uint8Array, i: number, p: Uint8Array): boolean {
  if (i + p.length > b.length) return false;
  for (let k = 0; k < p.length; k++) if (b[i + k] !== p[k]) return false;
  return true;
}

function hex64(b: Uint8Array, i: number): boolean {
  if (i + 64 > b.length) return false;
  for (let k = i; k < i + 64; k++) if (HEXCODE[b[k]!] !== 1) return false;
  return true;
}

// decimalAt: is n (≥ 1) written in decimal at b[i…], with no leading zero? Returns the offset past
// its digits, or −1. The digits are read as a number (multiply-add, no division) and compared.
function decimalAt(b: Uint8Array, i: number, n: number): number {
  if (b[i] === 0x30) return -1;
  let x = 0;
  let k = i;
  for (; k < b.length && k - i < 15; k++) {
    const c = b[k]! - 0x30;
    if (c < 0 || c > 9) break;
    x = x * 10 + c;
  }
  return k > i && x === n ? k : -1;
}

const asciiDec = new TextDecoder();

// The executed line, the bulk of every record, matched byte for byte: no JSON parse at all.
function readExecutedLine(b: Uint8Array, n: number): FastLine | null {
  if (!has(b, 0, P_HEAD) || !hex64(b, 16) || !has(b, 80, P_N)) return null;
  const i = decimalAt(b, 86, n);
  if (i < 0 || !has(b, i, P_ATT) || !hex64(b, i + P_ATT.length)) return null;
  const end = i + P_ATT.length + 64;
  if (end + P_END.length !== b.length || !has(b, end, P_END)) return null;
  const head = asciiDec.decode(b.subarray(9, 80)) as Digest;
  const attestation = asciiDec.decode(b.subarray(end - 71, end)) as Digest;
  // The segment starts at its "{" (after ',"segment":') and ends before the line's closing "}".
  return { seg: { kind: "executed", attestation }, canonical: b.subarray(i + 11, b.length - 1), head };
}

/**
 * readSegmentLine reads line bytes (without the line feed) as segment `n` when they are exactly the
 * canonical line a writer makes; returns null for anything else (the caller then reads it strictly).
 */
export function readSegmentLine(bytes: Uint8Array, n: number): FastLine | null {
  const executed = readExecutedLine(bytes, n);
  if (executed !== null) return executed;
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return null;
  }
  const head = text.slice(HEAD_START, HEAD_END);
  const mid = `","n":${n},"segment":`;
  if (!text.startsWith('{"head":"') || !isDigest(head) || !text.startsWith(mid, HEAD_END)) return null;
  const start = HEAD_END + mid.length;
  if (text.charCodeAt(text.length - 1) !== 0x7d) return null;
  const segText = text.slice(start, -1);
  const seg = parsed(segText);
  if (seg === null || segmentJcs(seg) !== segText) return null;
  // Everything before the segment is ASCII, so its character offset is its byte offset.
  return { seg, canonical: bytes.subarray(start, bytes.length - 1), head };
}

const P_SEG = ascii(',"segment":');
const P_EXEC = ascii('{"attestation":"blake3:');

/** A fixed text as little-endian 32-bit words, its last 0–3 bytes apart. */
interface Words {
  readonly words: Uint32Array;
  readonly tail: Uint8Array;
}

function wordsOf(p: Uint8Array): Words {
  const n = p.length >> 2;
  const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
  return {
    words: Uint32Array.from({ length: n }, (_, i) => dv.getUint32(4 * i, true)),
    tail: p.slice(4 * n),
  };
}

const W_HEAD = wordsOf(P_HEAD);
const W_N = wordsOf(P_N);
const W_SEG_EXEC = wordsOf(Uint8Array.from([...P_SEG, ...P_EXEC]));
const W_END = wordsOf(P_END);

// sameWords: does dv hold `w` at i? Precondition: i ≥ 0; false when it runs past the end.
function sameWords(dv: DataView, i: number, w: Words): boolean {
  const n = w.words.length;
  if (i + 4 * n + w.tail.length > dv.byteLength) return false;
  for (let k = 0; k < n; k++) if (dv.getUint32(i + 4 * k, true) !== w.words[k]) return false;
  for (let k = 0, j = i + 4 * n; k < w.tail.length; k++, j++) if (dv.getUint8(j) !== w.tail[k]) return false;
  return true;
}

// 1 for each pair of lowercase hex digits, indexed by the pair read big-endian (first digit high).
const HEXPAIR = new Uint8Array(65536);
for (const x of "0123456789abcdef")
  for (const y of "0123456789abcdef") HEXPAIR[(x.charCodeAt(0) << 8) | y.charCodeAt(0)] = 1;

// hex64At: are the 64 bytes at dv[i…] lowercase hex? Precondition: they are inside dv.
function hex64At(dv: DataView, i: number): boolean {
  for (let k = i; k < i + 64; k += 2) if (HEXPAIR[dv.getUint16(k)] !== 1) return false;
  return true;
}

/**
 * appendExecutedLines appends to `record` the executed lines a writer made, read from `bytes` from
 * offset `at` (a line start; `text` is bytes[base…] one character per byte, for slicing out the
 * ASCII strings it has checked), and stops at the first line that is anything else or whose stated
 * head is not the recomputed one.
 * Returns the offset reached, a line start; each line end is pushed onto `ends` when given. Never
 * refuses: the caller reads on from the returned offset with the line readers above, which refuse.
 * The stated head's hex is checked by comparison with the recomputed head, so it is not scanned here.
 */
export function appendExecutedLines(
  record: RunRecord,
  bytes: Uint8Array,
  text: string,
  base: number,
  at: number,
  ends: number[] | null,
): number {
  // Fixed text is compared four bytes at a time and hex two at a time: per-byte loops cost more
  // than the line's hashing.
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (;;) {
    if (at + 86 > bytes.length || !sameWords(dv, at, W_HEAD) || !sameWords(dv, at + 80, W_N)) return at;
    const seg0 = decimalAt(bytes, at + 86, record.segments.length + 1);
    const a = seg0 + 11 + P_EXEC.length;
    const nl = a + 64 + P_END.length; // an executed line's length is fixed by its n
    if (seg0 < 0 || nl >= bytes.length || bytes[nl] !== 0x0a) return at;
    if (!sameWords(dv, seg0, W_SEG_EXEC) || !hex64At(dv, a) || !sameWords(dv, a + 64, W_END)) return at;
    const seg: Segment = { kind: "executed", attestation: text.slice(a - 7 - base, a + 64 - base) as Digest };
    const head = text.slice(at + 9 - base, at + 80 - base) as Digest;
    try {
      // The segment's JCS bytes run from its "{" to just before the line's closing "}".
      if (!record.appendStatedView(seg, dv, seg0 + 11, nl - 1, at + 16, head)) return at;
    } catch {
      return at;
    }
    at = nl + 1;
    ends?.push(at);
  }
}
