// Crash states from a system-call trace, in the manner of the ALICE study (Pillai et al., OSDI 2014):
// strace records what a workload asked of the file system; this module turns the trace into events
// (metadata operations, data writes, fsyncs, acknowledgements) and builds the states a crash at any
// point could leave on disk under a stated persistence model.
//
// The model (what ext4 and xfs promise, read conservatively):
// - Metadata operations (create, mkdir, rename, link, symlink, unlink, rmdir) reach the disk in the
//   order they were issued: a crash leaves a prefix of them. A completed fsync of any file or folder
//   makes every metadata operation issued before it durable (the journal commits as a whole).
// - The data of a regular file is durable only up to the last completed fsync of that inode. Each
//   later write may be lost or torn (only its first half reaches the disk), independently of the
//   others and of the metadata: a rename may be durable while the data it names is not.
// - A symbolic link's target is part of its inode, created whole with its name.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** One event of the workload, in issue order. */
export type TraceEvent =
  | { readonly kind: "meta"; readonly op: MetaOp }
  | { readonly kind: "data"; readonly inode: number; readonly at: number; readonly bytes: Buffer }
  | { readonly kind: "sync"; readonly inode: number; readonly path: string }
  | { readonly kind: "ack"; readonly ack: Record<string, unknown> };

/** A metadata operation on names (inodes are numbered by the trace's own bookkeeping). */
export type MetaOp =
  | { readonly op: "create"; readonly path: string; readonly inode: number }
  | { readonly op: "mkdir"; readonly path: string; readonly inode: number }
  | { readonly op: "symlink"; readonly path: string; readonly inode: number; readonly target: Buffer }
  | { readonly op: "link"; readonly from: string; readonly path: string }
  | { readonly op: "rename"; readonly from: string; readonly path: string }
  | { readonly op: "unlink"; readonly path: string };

const unhex = (s: string): Buffer => Buffer.from(s.replace(/\\x/g, ""), "hex");

/** One argument of a traced call: a string's bytes, a descriptor with its path, or bare text. */
type Arg = { s: Buffer } | { fd: string; path: string } | { text: string };

function parseArg(t: string): Arg {
  const a = t.trim();
  if (a.startsWith('"')) return { s: unhex(a.slice(1, a.lastIndexOf('"'))) };
  const m = /^([A-Z_0-9]+)<((?:\\x[0-9a-f]{2})*)>$/.exec(a);
  if (m) return { fd: m[1]!, path: unhex(m[2]!).toString("latin1") };
  return { text: a };
}

interface Call {
  readonly name: string;
  readonly args: Arg[];
  readonly ret: number;
  readonly retPath: string | null;
}

function parseLine(line: string): Call | null {
  const m = /^\d+\s+(\w+)\((.*)\)\s+=\s+(-?\d+)(?:<((?:\\x[0-9a-f]{2})*)>)?/.exec(line);
  if (!m) return null;
  return {
    name: m[1]!,
    args: m[2]!.split(", ").map(parseArg),
    ret: Number(m[3]),
    retPath: m[4] === undefined ? null : unhex(m[4]).toString("latin1"),
  };
}

/** joinResumed puts calls strace split (`<unfinished ...>` … `<... x resumed>`) back on one line. */
function joinResumed(text: string): string[] {
  const open = new Map<string, string>();
  const out: string[] = [];
  for (const l of text.split("\n")) {
    const pid = /^(\d+)\s/.exec(l)?.[1] ?? "";
    if (l.endsWith("<unfinished ...>")) open.set(pid, l.slice(0, -"<unfinished ...>".length).trimEnd());
    else if (/^\d+\s+<\.\.\. \w+ resumed>/.test(l)) {
      out.push(`${open.get(pid) ?? ""}${l.replace(/^\d+\s+<\.\.\. \w+ resumed>\s?/, "")}`);
      open.delete(pid);
    } else out.push(l);
  }
  return out;
}

const str = (a: Arg | undefined): string => (a && "s" in a ? a.s.toString("latin1") : "");
const fdPath = (a: Arg | undefined): string => (a && "fd" in a ? a.path : "");

/** Builds events from the calls under `root`, numbering inodes as they appear. */
class Builder {
  readonly events: TraceEvent[] = [];
  readonly #names = new Map<string, number>();
  readonly #fds = new Map<string, { inode: number; pos: number }>();
  #next = 1;

  constructor(private readonly root: string) {}

  #under(p: string): boolean {
    return p === this.root || p.startsWith(`${this.root}/`);
  }
  #meta(op: MetaOp): void {
    if (op.op === "link") this.#names.set(op.path, this.#names.get(op.from)!);
    else if (op.op === "rename") {
      this.#names.set(op.path, this.#names.get(op.from)!);
      this.#names.delete(op.from);
    } else if (op.op === "unlink") this.#names.delete(op.path);
    else this.#names.set(op.path, op.inode);
    this.events.push({ kind: "meta", op });
  }
  #at(dirArg: Arg | undefined, p: string): string {
    return p.startsWith("/") ? p : join(fdPath(dirArg), p);
  }

  call(c: Call): void {
    if (c.name === "write" && c.args[0] && "fd" in c.args[0] && c.args[0].fd === "1") {
      const t = str(c.args[1]);
      if (t.startsWith("ack "))
        this.events.push({ kind: "ack", ack: JSON.parse(t.slice(4)) as Record<string, unknown> });
      return;
    }
    if (c.ret < 0) return;
    const dispatch: Record<string, () => void> = {
      openat: () => this.#open(this.#at(c.args[0], str(c.args[1])), c),
      mkdir: () => this.#mkdir(str(c.args[0])),
      mkdirat: () => this.#mkdir(this.#at(c.args[0], str(c.args[1]))),
      write: () => this.#write(c, null),
      pwrite64: () => this.#write(c, Number((c.args[3] as { text: string }).text)),
      fsync: () => this.#sync(c),
      fdatasync: () => this.#sync(c),
      rename: () => this.#two("rename", str(c.args[0]), str(c.args[1])),
      renameat: () =>
        this.#two("rename", this.#at(c.args[0], str(c.args[1])), this.#at(c.args[2], str(c.args[3]))),
      renameat2: () =>
        this.#two("rename", this.#at(c.args[0], str(c.args[1])), this.#at(c.args[2], str(c.args[3]))),
      link: () => this.#two("link", str(c.args[0]), str(c.args[1])),
      linkat: () =>
        this.#two("link", this.#at(c.args[0], str(c.args[1])), this.#at(c.args[2], str(c.args[3]))),
      symlink: () => this.#symlink(str(c.args[1]), c.args[0]),
      symlinkat: () => this.#symlink(this.#at(c.args[1], str(c.args[2])), c.args[0]),
      unlink: () => this.#unlink(str(c.args[0])),
      unlinkat: () => this.#unlink(this.#at(c.args[0], str(c.args[1]))),
      rmdir: () => this.#unlink(str(c.args[0])),
    };
    dispatch[c.name]?.();
  }

  #open(path: string, c: Call): void {
    if (!this.#under(path)) return;
    const flags = c.args[2] && "text" in c.args[2] ? c.args[2].text : "";
    let inode = this.#names.get(path);
    if (inode === undefined) {
      if (!flags.includes("O_CREAT")) return;
      inode = this.#next++;
      this.#meta({ op: "create", path, inode });
    }
    this.#fds.set(String(c.ret), { inode, pos: 0 });
  }
  #mkdir(path: string): void {
    if (this.#under(path)) this.#meta({ op: "mkdir", path, inode: this.#next++ });
  }
  #write(c: Call, at: number | null): void {
    const a = c.args[0];
    if (!a || !("fd" in a) || !this.#under(a.path)) return;
    const f = this.#fds.get(a.fd);
    if (!f) throw new Error(`write to ${a.path} on a descriptor the trace did not see opened`);
    const bytes = (c.args[1] as { s: Buffer }).s.subarray(0, c.ret);
    const pos = at ?? f.pos;
    if (at === null) f.pos += bytes.length;
    this.events.push({ kind: "data", inode: f.inode, at: pos, bytes });
  }
  #sync(c: Call): void {
    const a = c.args[0];
    if (!a || !("fd" in a) || !this.#under(a.path)) return;
    const f = this.#fds.get(a.fd);
    if (f) this.events.push({ kind: "sync", inode: f.inode, path: a.path });
  }
  #two(op: "rename" | "link", from: string, path: string): void {
    if (this.#under(path)) this.#meta({ op, from, path });
  }
  #symlink(path: string, target: Arg | undefined): void {
    if (this.#under(path))
      this.#meta({ op: "symlink", path, inode: this.#next++, target: (target as { s: Buffer }).s });
  }
  #unlink(path: string): void {
    if (this.#under(path) && this.#names.has(path)) this.#meta({ op: "unlink", path });
  }
}

/** readTrace turns an strace -f -y -xx log into the events under `root`, in issue order. */
export function readTrace(file: string, root: string): TraceEvent[] {
  const b = new Builder(root);
  for (const l of joinResumed(readFileSync(file, "latin1"))) {
    const c = parseLine(l);
    if (c) b.call(c);
  }
  return b.events;
}

/** A file system state: each path's kind and, for a file, its bytes; for a symlink, its target. */
export type FsState = Map<string, { kind: "file" | "dir" | "symlink"; bytes: Buffer }>;

/** A choice for the data writes that are not yet durable: keep all, lose all, lose one, tear one. */
export type DataChoice = { keep: "all" } | { keep: "none" } | { drop: number } | { tear: number };

function applyMeta(names: Map<string, number>, kinds: Map<number, MetaOp>, op: MetaOp): void {
  if (op.op === "link" || op.op === "rename") {
    const i = names.get(op.from);
    if (i === undefined || !names.has(dirname(op.path))) return; // its source or folder was lost
    names.set(op.path, i);
    if (op.op === "rename") names.delete(op.from);
    return;
  }
  if (op.op === "unlink") {
    for (const p of [...names.keys()]) if (p === op.path || p.startsWith(`${op.path}/`)) names.delete(p);
    return;
  }
  if (names.has(dirname(op.path))) {
    names.set(op.path, op.inode);
    kinds.set(op.inode, op);
  }
}

/**
 * stateAt builds what the disk holds after a crash following events[0, k): the first `meta`
 * metadata operations, and each inode's data durable up to its last fsync, the later writes as
 * `choice` says (indices count those later writes across all inodes, in issue order). `base` is
 * the folder that already existed, durably, before the workload.
 */
export function stateAt(
  events: readonly TraceEvent[],
  k: number,
  meta: number,
  choice: DataChoice,
  base: string,
): FsState {
  const names = new Map<string, number>([[base, 0]]);
  const kinds = new Map<number, MetaOp>();
  let seen = 0;
  for (let i = 0; i < k && seen < meta; i++) {
    const e = events[i]!;
    if (e.kind === "meta") {
      applyMeta(names, kinds, e.op);
      seen++;
    }
  }
  const content = dataAt(events, k, choice);
  const out: FsState = new Map();
  for (const [p, i] of names) {
    if (i === 0) continue;
    const op = kinds.get(i)!;
    if (op.op === "mkdir") out.set(p, { kind: "dir", bytes: Buffer.alloc(0) });
    else if (op.op === "symlink") out.set(p, { kind: "symlink", bytes: op.target });
    else out.set(p, { kind: "file", bytes: content.get(i) ?? Buffer.alloc(0) });
  }
  return out;
}

/** Which data writes before k are not covered by a later fsync of their inode (indices into events). */
export function optionalWrites(events: readonly TraceEvent[], k: number): number[] {
  const lastSync = new Map<number, number>();
  for (let i = 0; i < k; i++) {
    const e = events[i]!;
    if (e.kind === "sync") lastSync.set(e.inode, i);
  }
  const out: number[] = [];
  for (let i = 0; i < k; i++) {
    const e = events[i]!;
    if (e.kind === "data" && (lastSync.get(e.inode) ?? -1) < i) out.push(i);
  }
  return out;
}

function dataAt(events: readonly TraceEvent[], k: number, choice: DataChoice): Map<number, Buffer> {
  const optional = optionalWrites(events, k);
  const files = new Map<number, Buffer>();
  for (let i = 0; i < k; i++) {
    const e = events[i]!;
    if (e.kind !== "data") continue;
    const j = optional.indexOf(i);
    let bytes = e.bytes;
    if (j >= 0) {
      if ("keep" in choice && choice.keep === "none") continue;
      if ("drop" in choice && choice.drop === j) continue;
      if ("tear" in choice && choice.tear === j) bytes = bytes.subarray(0, bytes.length >> 1);
    }
    const old = files.get(e.inode) ?? Buffer.alloc(0);
    const next = Buffer.alloc(Math.max(old.length, e.at + bytes.length));
    old.copy(next);
    bytes.copy(next, e.at);
    files.set(e.inode, next);
  }
  return files;
}

/** The number of metadata operations before k, and of those a completed fsync before k made durable. */
export function metaBounds(events: readonly TraceEvent[], k: number): { durable: number; issued: number } {
  let issued = 0;
  let durable = 0;
  for (let i = 0; i < k; i++) {
    const e = events[i]!;
    if (e.kind === "meta") issued++;
    else if (e.kind === "sync") durable = issued;
  }
  return { durable, issued };
}
