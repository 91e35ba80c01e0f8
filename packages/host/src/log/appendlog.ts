// The one append-only log of the host's chained ledgers (spend ledgers first; jcp §4.3). Layout: a
// folder holding one file per entry, named by its 1-based position in 12 digits, and tmp/.
//
// An entry file is `<prev head>\n<payload>`: the head it extends, then the caller's bytes. The head
// after an entry is the digest of its whole file; the head of an empty log is LOG_GENESIS.
//
// Compare-and-append: append(expected, payload) reads the log, refuses with `StaleHead` when the head
// is no longer `expected`, writes the entry to a temp file and fsyncs it, then claims the next
// position with link(2) through the store's publishExclusive (won only when the name is this
// writer's own inode), so exactly one of several concurrent writers extends a head; the others get
// `StaleHead` and retry from the new head. The folder is fsynced before success is reported.
// Entries are never rewritten. Readers only read: they work on a read-only log.
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { digestBytes, isDigest, type Digest } from "@sbx/wire";
import { HostError } from "../errors.ts";
import { fsyncDir, publishExclusive, TEMP_NAME, writeTemp } from "../store/durable.ts";

/** The head of an empty log: the digest of the log's label. */
export const LOG_GENESIS: Digest = digestBytes(new TextEncoder().encode("sbx.log/1"));

const ENTRY_NAME = /^[0-9]{12}$/;
const NL = 0x0a;

/** One entry as read: its position (1-based), the head it extends, its payload, the head after it. */
export interface LogEntry {
  readonly seq: number;
  readonly prev: Digest;
  readonly payload: Uint8Array;
  readonly head: Digest;
}

/** A log as read: its entries in order and its head. */
export interface LogState {
  readonly entries: readonly LogEntry[];
  readonly head: Digest;
}

/** A point a reader verified a log up to: how many entries, and the head after them. */
export interface LogMark {
  readonly seq: number;
  readonly head: Digest;
}

/** The mark of an empty log. */
export const LOG_START: LogMark = { seq: 0, head: LOG_GENESIS };

function entryName(seq: number): string {
  return String(seq).padStart(12, "0");
}

/** isLog reports whether `dir` is a folder (an existing log, possibly empty). */
export function isLog(dir: string): boolean {
  return statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}

/**
 * readLog reads every entry of the log in `dir` without writing anything, checking that each names
 * the head before it (`LogBroken` otherwise, or when positions have a gap). A missing folder is an
 * empty log.
 */
export function readLog(dir: string): LogState {
  if (!isLog(dir)) return { entries: [], head: LOG_GENESIS };
  const names = readdirSync(dir)
    .filter((n) => ENTRY_NAME.test(n))
    .sort();
  const entries: LogEntry[] = [];
  let head = LOG_GENESIS;
  names.forEach((name, i) => {
    const seq = i + 1;
    if (name !== entryName(seq)) throw new HostError("LogBroken", `${dir}: entry ${seq} is missing`);
    const e = readEntry(dir, seq, head);
    entries.push(e);
    head = e.head;
  });
  return { entries, head };
}

// Reads the entry at `seq` and checks it extends `head` (LogBroken otherwise).
function readEntry(dir: string, seq: number, head: Digest): LogEntry {
  const bytes = readFileSync(join(dir, entryName(seq)));
  const nl = bytes.indexOf(NL);
  const prev = nl < 0 ? "" : new TextDecoder().decode(bytes.subarray(0, nl));
  if (!isDigest(prev) || prev !== head)
    throw new HostError("LogBroken", `${dir}: entry ${seq} does not extend head ${head}`);
  return { seq, prev, payload: bytes.subarray(nl + 1), head: digestBytes(bytes) };
}

/**
 * readLogFrom reads only the entries after `mark` (a position and head an earlier read verified),
 * so a writer that keeps its verified state reads each entry once: positions mark.seq + 1, … until
 * one is missing. `LogBroken` when the first does not extend mark.head, a later one its
 * predecessor, or the position after the first missing one exists (a gap).
 */
export function readLogFrom(dir: string, mark: LogMark): LogState {
  const entries: LogEntry[] = [];
  let head = mark.head;
  for (let seq = mark.seq + 1; ; seq++) {
    if (!existsSync(join(dir, entryName(seq)))) {
      if (existsSync(join(dir, entryName(seq + 1))))
        throw new HostError("LogBroken", `${dir}: entry ${seq} is missing`);
      break;
    }
    const e = readEntry(dir, seq, head);
    entries.push(e);
    head = e.head;
  }
  return { entries, head };
}

/** createLog makes the log's folder (and its tmp/) when missing, and sweeps dead writers' temps. */
export function createLog(dir: string): void {
  mkdirSync(join(dir, "tmp"), { recursive: true });
  sweepLogTemps(dir);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * sweepLogTemps removes from `<dir>/tmp/` the temporary entries of writers no longer alive (a writer
 * killed between writing its temp and claiming its position leaves one): only regular files named
 * as writeTemp names them (`<pid>-<16 hex>`) whose pid is not running. Best effort: a log this
 * process cannot write is left as it is. Returns how many were removed.
 */
export function sweepLogTemps(dir: string): number {
  const tmp = join(dir, "tmp");
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const f of names) {
    const pid = Number(TEMP_NAME.exec(f)?.[1] ?? "0");
    if (pid === 0 || pid === process.pid || alive(pid)) continue;
    const p = join(tmp, f);
    if (lstatSync(p, { throwIfNoEntry: false })?.isFile() !== true) continue;
    try {
      unlinkSync(p);
      removed++;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EROFS" || code === "EACCES" || code === "EPERM") return removed;
      if (code !== "ENOENT") throw e;
    }
  }
  return removed;
}

/**
 * appendLog appends `payload` after head `expected`; `StaleHead` when the head is no longer
 * `expected` (before the claim, or because another writer claimed the position first). Returns the
 * new head once the entry and the folder are fsynced. The log is created when missing.
 */
export function appendLog(dir: string, expected: Digest, payload: Uint8Array): Digest {
  createLog(dir);
  const { entries, head } = readLog(dir);
  if (head !== expected) throw new HostError("StaleHead", `${dir}: head is ${head}, expected ${expected}`);
  const prefix = new TextEncoder().encode(`${expected}\n`);
  const bytes = new Uint8Array(prefix.length + payload.length);
  bytes.set(prefix, 0);
  bytes.set(payload, prefix.length);
  const tmp = writeTemp(join(dir, "tmp"), bytes);
  // Ours only if our own link(2) made the name: identical bytes from another writer are not ours.
  if (!publishExclusive(tmp, join(dir, entryName(entries.length + 1))))
    throw new HostError("StaleHead", `${dir}: another writer extended head ${expected}`);
  fsyncDir(dir);
  return digestBytes(bytes);
}

// The head after the entry at `seq` (LOG_GENESIS at 0), or null when that entry is missing.
function headAt(dir: string, seq: number): Digest | null {
  if (seq === 0) return LOG_GENESIS;
  const p = join(dir, entryName(seq));
  return existsSync(p) ? digestBytes(readFileSync(p)) : null;
}

/**
 * appendLogAt appends `payload` after `mark` without reading the log: the entry at mark.seq must
 * still hash to mark.head (`LogBroken` otherwise), and the claim of position mark.seq + 1 by link(2)
 * decides the race (`StaleHead` for the losers), as in appendLog. Returns the mark after the entry
 * once it and the folder are fsynced. O(1) in the length of the log.
 */
export function appendLogAt(dir: string, mark: LogMark, payload: Uint8Array): LogMark {
  createLog(dir);
  if (headAt(dir, mark.seq) !== mark.head)
    throw new HostError("LogBroken", `${dir}: entry ${mark.seq} is not head ${mark.head}`);
  const prefix = new TextEncoder().encode(`${mark.head}\n`);
  const bytes = new Uint8Array(prefix.length + payload.length);
  bytes.set(prefix, 0);
  bytes.set(payload, prefix.length);
  const tmp = writeTemp(join(dir, "tmp"), bytes);
  if (!publishExclusive(tmp, join(dir, entryName(mark.seq + 1))))
    throw new HostError("StaleHead", `${dir}: another writer extended head ${mark.head}`);
  fsyncDir(dir);
  return { seq: mark.seq + 1, head: digestBytes(bytes) };
}
