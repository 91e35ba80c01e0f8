// Files the commands read and write. Every input is bounded before it is read (sandbox-attest §2.9):
// the size is taken from the opened descriptor and an oversize file is refused without reading it;
// JSON goes through the strict parser of @sbx/wire, never JSON.parse. Every output is written to a
// temporary sibling, fsynced and renamed into place, and the temporary is removed on any failure, so
// a failed write leaves neither a temporary file nor half an output behind.
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { createBlake3, formatDigest, isWireError, parseStrict, type Digest, type Json } from "@sbx/wire";
import { HostError } from "./errors.ts";

/** The §2.1/§2.9 default limit on one JSON input: 16 MiB. */
export const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** The limit on a key file (a PEM key is under 200 bytes). */
export const MAX_KEY_BYTES = 64 * 1024;
/** The §2.1 limit on nesting. */
export const MAX_JSON_DEPTH = 64;

/** REASONS words the system errors a user meets on paths. */
const REASONS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EISDIR: "is a directory",
  ENOTDIR: "a component of the path is not a directory",
  EROFS: "read-only file system",
  ENOSPC: "no space left on device",
  EEXIST: "already exists",
  ENAMETOOLONG: "name too long",
  ELOOP: "too many symbolic links",
  EFBIG: "file too large",
  EDQUOT: "disk quota exceeded",
};

/** systemReason is the words for a system error's code. */
export function systemReason(code: string): string {
  return REASONS[code] ?? code;
}

function codeOf(e: unknown): string {
  return typeof (e as { code?: unknown }).code === "string" ? (e as { code: string }).code : "EIO";
}

/** notAFile: `path`, given as a file to read (`input`) or write (`output`), is a directory. */
function notAFile(path: string, what: string, as: "input" | "output" = "input"): HostError {
  return new HostError("NotAFile", `${what} ${path} is a directory, not a file`, { detail: { [as]: path } });
}

/** unreadable turns a system error met opening or reading `path` into a one-line HostError. */
function unreadable(e: unknown, path: string, what: string): HostError {
  const code = codeOf(e);
  if (code === "EISDIR") return notAFile(path, what);
  return new HostError("Unreadable", `cannot read ${what} ${path}: ${systemReason(code)}`, {
    cause: e,
    detail: { input: path },
  });
}

function oversize(path: string, what: string, size: number | string, max: number): HostError {
  return new HostError(
    "OversizeInput",
    `${what} ${path} is ${size} bytes; the limit is ${max} bytes (sandbox-attest §2.9)`,
    { detail: { input: path } },
  );
}

/** readBounded reads the descriptor's bytes, refusing more than `max` before reading past it. */
function readBounded(fd: number, path: string, what: string, max: number): Buffer {
  const st = fstatSync(fd);
  if (st.isDirectory()) throw notAFile(path, what);
  if (st.isFile() && st.size > max) throw oversize(path, what, st.size, max);
  // A pipe or device has no size: read at most max + 1 bytes and refuse the extra one.
  const cap = st.isFile() ? st.size : max + 1;
  const buf = Buffer.alloc(Math.min(cap, max + 1) + (st.isFile() ? 1 : 0));
  let n = 0;
  for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
  if (n > max) throw oversize(path, what, `more than ${max}`, max);
  return buf.subarray(0, n);
}

/**
 * openInput opens a file of at most `max` bytes for the caller to read in order (and close), with
 * readInput's refusals (`Unreadable`, `NotAFile`, `OversizeInput`), checked before anything is read;
 * a pipe has no size, so its reader bounds what it reads.
 */
export function openInput(path: string, what: string, max: number): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (e) {
    throw unreadable(e, path, what);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw notAFile(path, what);
    if (st.isFile() && st.size > max) throw oversize(path, what, st.size, max);
    return fd;
  } catch (e) {
    closeSync(fd);
    throw e instanceof HostError ? e : unreadable(e, path, what);
  }
}

/**
 * readInput reads a file of at most `max` bytes. Refuses, as HostError (its path in the detail): a path that cannot be
 * opened or read (`Unreadable`), a directory (`NotAFile`), a larger file (`OversizeInput`, before
 * reading it). `what` names the file in the message ("chain file", "key file", …).
 */
export function readInput(path: string, what: string, max: number): Buffer {
  const fd = openInput(path, what, max);
  try {
    return readBounded(fd, path, what, max);
  } catch (e) {
    throw e instanceof HostError ? e : unreadable(e, path, what);
  } finally {
    closeSync(fd);
  }
}

/**
 * readJsonInput reads a JSON file within the §2.9 limits (size first, then depth) and parses it with
 * the strict parser (§2.1: duplicate keys, forbidden keys, unsafe numbers, bad UTF-8 refused). A parse
 * refusal is a HostError carrying the wire code, naming the file (exit 2).
 */
export function readJsonInput(path: string, what: string, max = MAX_JSON_BYTES): Json {
  const bytes = readInput(path, what, max);
  try {
    return parseStrict(bytes, { maxBytes: max, maxDepth: MAX_JSON_DEPTH });
  } catch (e) {
    if (!isWireError(e)) throw e;
    throw new HostError(e.code, `${what} ${path}: ${e.reason}`, { cause: e, detail: { input: path } });
  }
}

/**
 * hashInput returns the BLAKE3 digest of a file of any size, read in 1 MiB pieces (never held whole);
 * refuses as readInput does (`Unreadable`, `NotAFile`).
 */
export function hashInput(path: string, what: string): Digest {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY);
  } catch (e) {
    throw unreadable(e, path, what);
  }
  try {
    if (fstatSync(fd).isDirectory()) throw notAFile(path, what);
    const h = createBlake3();
    const buf = Buffer.alloc(1 << 20);
    for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null))
      h.update(buf.subarray(0, n));
    return formatDigest(h.digest());
  } catch (e) {
    throw e instanceof HostError ? e : unreadable(e, path, what);
  } finally {
    closeSync(fd);
  }
}

/** Options of writeOutput. */
export interface WriteOptions {
  /** File mode of the new file (default 0o644). */
  readonly mode?: number;
  /** Refuse (`OutputExists`) when the path exists, atomically (default: replace it). */
  readonly exclusive?: boolean;
  /** What the file is, for messages. */
  readonly what?: string;
}

function writeAll(fd: number, data: Uint8Array): void {
  for (let off = 0; off < data.length;) off += writeSync(fd, data, off, data.length - off);
}

// The rename is made durable by an fsync of the folder; where a file system cannot (EINVAL), the
// output is in place all the same, so that is not reported as a failed write.
function syncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    /* see above */
  } finally {
    closeSync(fd);
  }
}

function checkTarget(path: string, what: string): void {
  try {
    if (statSync(path).isDirectory()) throw notAFile(path, what, "output");
  } catch (e) {
    if (e instanceof HostError) throw e;
  }
}

/**
 * writeOutput writes `data` to `path` crash-safely: a temporary sibling opened exclusively, written,
 * fsynced, then renamed over `path` (or linked, for `exclusive`), then the directory fsynced. On any
 * failure the temporary is removed and a HostError names the path: `NotAFile` (a directory given),
 * `OutputExists` (exclusive), `Unwritable` (with the system's reason).
 */
export function writeOutput(path: string, data: string | Uint8Array, o: WriteOptions = {}): void {
  const what = o.what ?? "output";
  checkTarget(path, what);
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  let made = false;
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, o.mode ?? 0o644);
    made = true;
    try {
      writeAll(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (o.exclusive) {
      linkSync(tmp, path);
      unlinkSync(tmp);
    } else renameSync(tmp, path);
    made = false;
    syncDir(dirname(path));
  } catch (e) {
    if (made)
      try {
        unlinkSync(tmp);
      } catch {
        /* already gone */
      }
    const code = codeOf(e);
    if (code === "EEXIST" && o.exclusive)
      throw new HostError("OutputExists", `${what} ${path} exists; pass --force to replace it`, {
        detail: { output: path },
      });
    if (code === "EISDIR") throw notAFile(path, what, "output");
    throw new HostError("Unwritable", `cannot write ${what} ${path}: ${systemReason(code)}`, {
      cause: e,
      detail: { output: path },
    });
  }
}

/** writeJsonOutput writes a value as indented JSON text plus a newline (writeOutput). */
export function writeJsonOutput(path: string, value: unknown, o: WriteOptions = {}): void {
  writeOutput(path, JSON.stringify(value, null, 2) + "\n", o);
}
