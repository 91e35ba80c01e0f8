// §13.13 The run archive's container: POSIX ustar (IEEE 1003.1-2001), restricted so that there is one
// byte form per content. Every member is a regular file (typeflag '0'), mode 0444, uid/gid 0, mtime 0,
// empty owner names, written by writeArchive exactly; a reader rebuilds each header from the member's
// name and size and refuses any header that differs by a byte, padding that is not zero, a missing or
// non-zero end, and anything past it. So `tar tf` lists an archive, and no byte of one can change
// without a refusal.
import { HostError } from "../errors.ts";

const BLOCK = 512;

/** One member: a name (ASCII, under 100 bytes) and its content. */
export interface ArchiveMember {
  readonly name: string;
  readonly data: Uint8Array;
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, "0") + "\0";
}

function header(name: string, size: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (off: number, s: string): void => {
    for (let i = 0; i < s.length; i++) h[off + i] = s.charCodeAt(i);
  };
  put(0, name);
  put(100, octal(0o444, 8));
  put(108, octal(0, 8));
  put(116, octal(0, 8));
  put(124, octal(size, 12));
  put(136, octal(0, 12));
  put(148, "        ");
  put(156, "0");
  put(257, "ustar\0");
  put(263, "00");
  let sum = 0;
  for (const b of h) sum += b;
  put(148, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

const padded = (n: number): number => Math.ceil(n / BLOCK) * BLOCK;

/** writeArchive returns the archive of `members`, in the order given. */
export function writeArchive(members: readonly ArchiveMember[]): Uint8Array {
  const total = members.reduce((t, m) => t + BLOCK + padded(m.data.length), 2 * BLOCK);
  const out = new Uint8Array(total);
  let at = 0;
  for (const m of members) {
    if (!/^[\x21-\x7e]{1,99}$/.test(m.name)) throw new RangeError(`writeArchive: bad member name ${m.name}`);
    out.set(header(m.name, m.data.length), at);
    out.set(m.data, at + BLOCK);
    at += BLOCK + padded(m.data.length);
  }
  return out;
}

function bad(msg: string): never {
  throw new HostError("BadArchive", msg);
}

function allZero(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (b[i] !== 0) return false;
  return true;
}

function readName(h: Uint8Array): string {
  const end = h.indexOf(0);
  const n = end < 0 || end > 99 ? 100 : end;
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(h[i]!);
  return s;
}

function readSize(h: Uint8Array): number {
  let s = "";
  for (let i = 124; i < 135; i++) s += String.fromCharCode(h[i]!);
  return /^[0-7]{11}$/.test(s) ? parseInt(s, 8) : bad("a member's size is not 11 octal digits");
}

/** Limits on what readArchive accepts, checked before any member's content is used. */
export interface ArchiveLimits {
  readonly maxMembers: number;
  readonly maxMemberBytes: number;
  /** The most bytes read in all (a pipe has no size to check first). */
  readonly maxBytes?: number;
}

/** Fills `buf` from the input in order; returns the bytes read (0 at the end). */
export type ReadInto = (buf: Uint8Array) => number;

/** readFull reads exactly `n` bytes (fewer only at the end of the input). */
function readFull(read: ReadInto, n: number): Uint8Array {
  const out = new Uint8Array(n);
  let got = 0;
  while (got < n) {
    const k = read(out.subarray(got));
    if (k === 0) break;
    got += k;
  }
  return got === n ? out : out.subarray(0, got);
}

/** Where a member's content goes piece by piece, in order, instead of whole to onMember. */
export interface MemberSink {
  data(piece: Uint8Array): void;
  end(): void;
}

/** The largest piece a MemberSink is given (1 MiB). */
const PIECE = 1 << 20;

/**
 * readArchiveStream reads an archive written by writeArchive from `read`, member by member: each
 * header is checked before its content is read, and `onHeader` (when given) sees each name and size
 * then, so a caller refuses a member it does not admit without reading it; `onMember` gets each
 * member whole, in order, before the next header is read — unless `onHeader` returned a sink, which
 * gets that member's content in pieces of at most 1 MiB instead (so a member is never held whole).
 * Refuses as readArchive.
 */
export function readArchiveStream(
  read: ReadInto,
  limits: ArchiveLimits,
  onMember: (m: ArchiveMember) => void,
  onHeader?: (name: string, size: number) => MemberSink | undefined,
): void {
  const seen = new Set<string>();
  let total = 0;
  const take = (n: number): Uint8Array => {
    if (limits.maxBytes !== undefined && total + n > limits.maxBytes)
      bad(`the archive is over ${limits.maxBytes} bytes`);
    const b = readFull(read, n);
    total += b.length;
    return b;
  };
  for (let members = 0; ; members++) {
    const h = take(BLOCK);
    if (h.length < BLOCK)
      bad(h.length === 0 && members === 0 ? "an empty archive" : "no end-of-archive blocks");
    if (allZero(h, 0, BLOCK)) break;
    const name = readName(h);
    const size = readSize(h);
    if (size > limits.maxMemberBytes) bad(`member ${name} is ${size} bytes, over ${limits.maxMemberBytes}`);
    if (!/^[\x21-\x7e]{1,99}$/.test(name)) bad("a member name is not printable ASCII");
    const want = header(name, size);
    for (let i = 0; i < BLOCK; i++)
      if (h[i] !== want[i]) bad(`member ${name}: header byte ${i} is not canonical`);
    if (seen.has(name)) throw new HostError("DuplicateMember", `member ${name} appears twice`);
    seen.add(name);
    if (members >= limits.maxMembers) bad(`more than ${limits.maxMembers} members`);
    const sink = onHeader?.(name, size);
    if (sink) {
      for (let left = size; left > 0; left -= PIECE) {
        const piece = take(Math.min(PIECE, left));
        if (piece.length < Math.min(PIECE, left)) bad(`member ${name} runs past the archive`);
        sink.data(piece);
      }
      const pad = take(padded(size) - size);
      if (pad.length < padded(size) - size) bad(`member ${name} runs past the archive`);
      if (!allZero(pad, 0, pad.length)) bad(`member ${name}: padding is not zero`);
      sink.end();
      continue;
    }
    const body = take(padded(size));
    if (body.length < padded(size)) bad(`member ${name} runs past the archive`);
    if (!allZero(body, size, body.length)) bad(`member ${name}: padding is not zero`);
    onMember({ name, data: body.subarray(0, size) });
  }
  const end = take(BLOCK);
  if (end.length < BLOCK || !allZero(end, 0, BLOCK)) bad("no second end-of-archive block");
  if (take(1).length !== 0) bad("bytes after the end-of-archive blocks");
}

/**
 * readArchive reads an archive written by writeArchive (`BadArchive` for anything else: a header not
 * byte-identical to the one its name and size give, non-zero padding, a bad end, trailing bytes,
 * more members or a bigger member than `limits` allow), refusing a name seen twice (`DuplicateMember`).
 */
export function readArchive(b: Uint8Array, limits: ArchiveLimits): ArchiveMember[] {
  if (b.length % BLOCK !== 0 || b.length < 2 * BLOCK) bad("not a whole number of 512-byte blocks");
  const out: ArchiveMember[] = [];
  let at = 0;
  const read: ReadInto = (buf) => {
    const n = Math.min(buf.length, b.length - at);
    buf.set(b.subarray(at, at + n));
    at += n;
    return n;
  };
  readArchiveStream(read, limits, (m) => out.push(m));
  return out;
}
