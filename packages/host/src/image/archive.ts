// §14.9 Reading a tar stream (an image archive, or a layer, plain or gzip) entry by entry, fed
// synchronously from a file: each entry's bytes reach the caller before the next header is read, and
// the first error (the reader's or the caller's) stops the walk. Every header field the walk uses is
// checked here (§14.9.3): the checksum, the magic, octal numbers, the entry type (only the types
// §14.9.3 admits, plus the pax and GNU long-name headers that carry a name), pax records, name
// lengths. A gzip stream is inflated in bounded steps (GZIP_STEP bytes in at a time, so one step can
// never yield more than about a thousand times that), and the whole tar stream is bounded: reading
// stops at `maxBytes` (`ImageTooLarge`). zstd is refused (`ImageInvalid`): Node 20 has no zstd.
import { closeSync, openSync, readSync } from "node:fs";
import { Gunzip } from "minizlib";
import { HostError } from "../errors.ts";

const BLOCK = 512;
const CHUNK = 1 << 20;
/** Compressed bytes handed to the inflater at a time: at most ~16 MiB come out of one step. */
const GZIP_STEP = 16 << 10;
/** Largest pax extended header or GNU long name read. */
const MAX_META = 1 << 20;
/** Longest name component and whole name, in bytes (NAME_MAX, PATH_MAX less the NUL). */
export const NAME_MAX = 255;
export const PATH_MAX = 4095;

/** One entry as the walk hands it over: its header fields. */
export interface TarEntry {
  readonly path: string;
  readonly type: string;
  readonly mode: number;
  readonly size: number;
  readonly linkpath: string;
}

/** Where an entry's data goes: each chunk in order, then end (called synchronously, before the next entry). */
export interface EntrySink {
  data(chunk: Buffer): void;
  end(): void;
}

/** The entry types a walk hands over, by typeflag. */
const TYPES: Readonly<Record<string, string>> = {
  "0": "File",
  "\0": "File",
  "7": "ContiguousFile",
  "1": "Link",
  "2": "SymbolicLink",
  "3": "CharacterDevice",
  "4": "BlockDevice",
  "5": "Directory",
  "6": "FIFO",
};

function bad(what: string, msg: string): never {
  throw new HostError("ImageInvalid", `${what}: ${msg}`);
}

/** octalField reads a NUL- or space-terminated octal number (leading spaces allowed); null when not one. */
function octalField(h: Buffer, off: number, len: number): number | null {
  const s = h.toString("latin1", off, off + len);
  const m = /^ *([0-7]+)[ \0]*$/.exec(s);
  return m === null ? null : parseInt(m[1]!, 8);
}

/** A number field the walk does not use (uid, gid, mtime): octal, GNU base-256, or empty. */
function numberFieldOk(h: Buffer, off: number, len: number): boolean {
  if ((h[off]! & 0x80) !== 0) return true;
  return /^[ \0]*$/.test(h.toString("latin1", off, off + len)) || octalField(h, off, len) !== null;
}

function cString(h: Buffer, off: number, len: number): string {
  const end = h.indexOf(0, off);
  return h.toString("utf8", off, end < 0 || end > off + len ? off + len : end);
}

/** checkName refuses a name with a NUL, a component over NAME_MAX bytes, or over PATH_MAX bytes. */
function checkName(what: string, name: string, kind: string): void {
  if (name.includes("\0")) bad(what, `an entry's ${kind} holds a NUL byte`);
  if (Buffer.byteLength(name) > PATH_MAX) bad(what, `an entry's ${kind} is over ${PATH_MAX} bytes`);
  for (const c of name.split("/"))
    if (Buffer.byteLength(c) > NAME_MAX)
      bad(
        what,
        `an entry's ${kind} has a component over ${NAME_MAX} bytes: ${JSON.stringify(c.slice(0, 40))}…`,
      );
}

/** parsePax reads `LEN key=value\n` records strictly into a map (`ImageInvalid` otherwise). */
function parsePax(what: string, b: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let at = 0;
  while (at < b.length) {
    const sp = b.indexOf(0x20, at);
    const lenText = sp < 0 ? "" : b.toString("latin1", at, sp);
    if (!/^[1-9][0-9]{0,7}$/.test(lenText)) bad(what, "a pax record has no length");
    const end = at + Number(lenText);
    if (end > b.length || b[end - 1] !== 0x0a) bad(what, "a pax record runs past its header");
    const rec = b.toString("utf8", sp + 1, end - 1);
    const eq = rec.indexOf("=");
    if (eq <= 0) bad(what, "a pax record has no key");
    out.set(rec.slice(0, eq), rec.slice(eq + 1));
    at = end;
  }
  return out;
}

/** Per-entry overrides from the pax or GNU headers before it. */
interface Pending {
  path?: string;
  linkpath?: string;
  size?: number;
}

/** The tar reader proper: fed bytes in order, it calls onEntry and the sinks as blocks complete. */
class TarReader {
  private buf: Buffer = Buffer.alloc(0);
  /** Bytes of tar stream seen (uncompressed). */
  total = 0;
  private state: "header" | "data" | "meta" | "end1" | "end" = "header";
  private remaining = 0;
  private pad = 0;
  private sink: EntrySink | null = null;
  private meta: { kind: string; parts: Buffer[]; size: number } | null = null;
  private pending: Pending = {};

  constructor(
    private readonly what: string,
    private readonly maxBytes: number,
    private readonly onEntry: (e: TarEntry) => EntrySink | null,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.total > this.maxBytes)
      throw new HostError("ImageTooLarge", `${this.what} is over ${this.maxBytes} bytes unpacked`);
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    let at = 0;
    for (;;) {
      if (this.state === "data" || this.state === "meta") {
        if (this.remaining > 0) {
          const n = Math.min(this.remaining, this.buf.length - at);
          if (n === 0) break;
          const piece = this.buf.subarray(at, at + n);
          if (this.state === "data") this.sink?.data(piece);
          else this.meta!.parts.push(Buffer.from(piece));
          this.remaining -= n;
          at += n;
          if (this.remaining > 0) break;
        }
        if (this.buf.length - at < this.pad) break;
        at += this.pad;
        this.finishEntry();
        continue;
      }
      if (this.buf.length - at < BLOCK) break;
      const h = this.buf.subarray(at, at + BLOCK);
      at += BLOCK;
      if (this.state === "end") {
        if (h.some((x) => x !== 0)) bad(this.what, "bytes after the end-of-archive blocks");
        continue;
      }
      const zero = h.every((x) => x === 0);
      if (this.state === "end1") {
        if (!zero) bad(this.what, "a lone zero block before more entries");
        this.state = "end";
        continue;
      }
      if (zero) {
        if (Object.keys(this.pending).length > 0) bad(this.what, "a pax or long-name header before the end");
        this.state = "end1";
        continue;
      }
      this.header(Buffer.from(h));
    }
    this.buf = this.buf.subarray(at);
  }

  private header(h: Buffer): void {
    const w = this.what;
    const sum = octalField(h, 148, 8);
    let want = 0;
    for (let i = 0; i < BLOCK; i++) want += i >= 148 && i < 156 ? 0x20 : h[i]!;
    if (sum === null || sum !== want) bad(w, "a header's checksum is wrong (not a tar header)");
    const magic = h.toString("latin1", 257, 265);
    const ustar = magic === "ustar\u000000";
    if (!ustar && magic !== "ustar  \0") bad(w, "a header is neither POSIX ustar nor GNU tar");
    const flag = String.fromCharCode(h[156]!);
    const size = octalField(h, 124, 12);
    if (size === null) bad(w, "a header's size field is not octal");
    const mode = octalField(h, 100, 8);
    if (mode === null) bad(w, "a header's mode field is not octal");
    if (!numberFieldOk(h, 108, 8) || !numberFieldOk(h, 116, 8) || !numberFieldOk(h, 136, 12))
      bad(w, "a header's uid, gid or mtime field is not a number");
    if (flag === "x" || flag === "g" || flag === "L" || flag === "K") {
      if (size > MAX_META) bad(w, `a ${flag} header is over ${MAX_META} bytes`);
      this.meta = { kind: flag, parts: [], size };
      this.begin("meta", size);
      return;
    }
    const type = TYPES[flag];
    if (type === undefined)
      bad(
        w,
        `entry type ${JSON.stringify(flag)} is not admitted (§14.9.3: files, links, directories, devices, FIFOs)`,
      );
    const p = this.pending;
    this.pending = {};
    const base = cString(h, 0, 100);
    const prefix = ustar ? cString(h, 345, 155) : "";
    const path = p.path ?? (prefix === "" ? base : `${prefix}/${base}`);
    const linkpath = p.linkpath ?? cString(h, 157, 100);
    checkName(w, path, "name");
    checkName(w, linkpath, "link target");
    if (path === "") bad(w, "an entry has an empty name");
    const dataSize = type === "File" || type === "ContiguousFile" ? (p.size ?? size) : 0;
    if (
      (type !== "File" && type !== "ContiguousFile" && size !== 0) ||
      (p.size !== undefined && dataSize !== p.size)
    )
      bad(w, `entry ${JSON.stringify(path)} of type ${type} carries data`);
    if (dataSize > this.maxBytes - this.total)
      throw new HostError(
        "ImageTooLarge",
        `${w}: entry ${JSON.stringify(path)} is ${dataSize} bytes, over the bound`,
      );
    this.sink = this.onEntry({ path, type, mode, size: dataSize, linkpath });
    this.begin("data", dataSize);
  }

  private begin(state: "data" | "meta", size: number): void {
    this.state = state;
    this.remaining = size;
    this.pad = (BLOCK - (size % BLOCK)) % BLOCK;
  }

  private finishEntry(): void {
    if (this.state === "data") {
      const s = this.sink;
      this.sink = null;
      s?.end();
    } else {
      const m = this.meta!;
      this.meta = null;
      const b = Buffer.concat(m.parts);
      if (m.kind === "L" || m.kind === "K") {
        const end = b.indexOf(0);
        const name = b.toString("utf8", 0, end < 0 ? b.length : end);
        if (m.kind === "L") this.pending.path = name;
        else this.pending.linkpath = name;
      } else {
        const recs = parsePax(this.what, b);
        for (const k of recs.keys())
          if (k.startsWith("GNU.sparse.")) bad(this.what, "a GNU sparse entry is not admitted");
        if (m.kind === "x") {
          const path = recs.get("path");
          const linkpath = recs.get("linkpath");
          const size = recs.get("size");
          if (path !== undefined) this.pending.path = path;
          if (linkpath !== undefined) this.pending.linkpath = linkpath;
          if (size !== undefined) {
            if (!/^(0|[1-9][0-9]{0,15})$/.test(size)) bad(this.what, "a pax size is not a decimal number");
            this.pending.size = Number(size);
          }
        } else if (recs.has("path") || recs.has("linkpath") || recs.has("size"))
          bad(this.what, "a global pax header sets a name or a size");
      }
    }
    this.state = "header";
  }

  end(): void {
    if (this.buf.length !== 0 || this.state !== "end")
      bad(this.what, "the archive ended early (no end-of-archive blocks)");
  }
}

/** Options of a walk: the most bytes of tar stream (after inflating) it reads. */
export interface WalkOptions {
  readonly maxBytes?: number;
}

/**
 * walkTar reads the tar (or gzip tar) file at `path` and calls `onEntry` for each entry, in order;
 * the sink it returns (if any) receives the entry's data. Returns the bytes of tar stream read.
 * A malformed archive, a zstd one, or an entry type §14.9.3 does not admit is `ImageInvalid`
 * (`what` names it); a stream over `maxBytes` is `ImageTooLarge`; an error thrown by `onEntry` or by
 * a data handler stops the walk and is rethrown as it is.
 */
export function walkTar(
  path: string,
  what: string,
  onEntry: (e: TarEntry) => EntrySink | null,
  opts: WalkOptions = {},
): number {
  const reader = new TarReader(what, opts.maxBytes ?? Number.MAX_SAFE_INTEGER, onEntry);
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let n = readSync(fd, buf, 0, CHUNK, null);
    if (n >= 4 && buf.readUInt32BE(0) === 0x28b52ffd)
      bad(what, "is zstd-compressed, which this host does not read (§14.9.1: tar or tar+gzip)");
    const gzip = n >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;
    const gz = gzip ? new Gunzip({}) : null;
    const state: { err: Error | null } = { err: null };
    gz?.on("data", (c: Buffer) => {
      if (state.err === null)
        try {
          reader.push(c);
        } catch (err) {
          state.err = err instanceof Error ? err : new Error(String(err));
        }
    });
    gz?.on(
      "error",
      (err: unknown) =>
        (state.err ??= new HostError("ImageInvalid", `${what}: bad gzip data`, { cause: err })),
    );
    for (; n > 0; n = readSync(fd, buf, 0, CHUNK, null)) {
      if (gz === null) reader.push(Buffer.from(buf.subarray(0, n)));
      else
        for (let at = 0; at < n && state.err === null; at += GZIP_STEP)
          gz.write(Buffer.from(buf.subarray(at, Math.min(n, at + GZIP_STEP))));
      if (state.err !== null) throw state.err;
    }
    if (gz !== null) {
      gz.end();
      if (state.err !== null) throw state.err;
    }
    reader.end();
    return reader.total;
  } finally {
    closeSync(fd);
  }
}
