// §13.8 The filesystem root of a snapshot: the address of a Merkle DAG of the workspace. Each
// directory is one object, {"entries":[…],"format":"sandbox.fs.dir/1"}, its entries sorted by the
// UTF-8 bytes of their names; an entry names a file, directory or symbolic link with its permission
// bits, its size in bytes and the digest of exactly those bytes (file content, the link target, or
// the child directory object's JCS bytes). Two hosts compute the same root for the same tree.
import {
  canonicalBytes,
  compareBytes,
  isAmount,
  isDigest,
  parseAmount,
  parseCanonical,
  utf8,
  type Amount,
  type Digest,
  type Json,
} from "@sbx/wire";
import { SandboxAttestError } from "../errors.ts";

/** The format name of a directory object. */
export const FS_DIR_FORMAT = "sandbox.fs.dir/1";
/** The kinds of entry a tree holds; devices, FIFOs and sockets are refused by snapshotting hosts. */
export type FsKind = "file" | "dir" | "symlink";

/** One entry of a directory object. */
export interface FsEntry {
  readonly name: string;
  readonly kind: FsKind;
  /** Permission bits only (0 to 0o777); symbolic links carry 0o777. */
  readonly mode: number;
  readonly size: Amount;
  readonly digest: Digest;
}

/** A directory object. */
export interface FsDir {
  readonly format: typeof FS_DIR_FORMAT;
  readonly entries: readonly FsEntry[];
}

const KINDS: ReadonlySet<string> = new Set(["file", "dir", "symlink"]);
/**
 * Largest directory object, in bytes (§13.8): every reader accepts up to this much and a snapshotting
 * host refuses a directory whose object would be larger (`DirectoryTooLarge`) before anything cites
 * it, so whatever a suspend writes a resume can read. About 190,000 entries of 255-byte names.
 */
export const MAX_DIR_BYTES = 64 * 1024 * 1024;
/** Most entries in one directory object (§13.8). */
export const MAX_DIR_ENTRIES = 1_000_000;
/** Deepest directory nesting below the root (§13.8); deeper trees are refused at snapshot time. */
export const MAX_TREE_DEPTH = 1024;

function bad(msg: string): never {
  throw new SandboxAttestError("BadFsTree", msg);
}

/** isEntryName reports whether `name` may name an entry: non-empty, no "/" or NUL, not "." or "..". */
export function isEntryName(name: string): boolean {
  return (
    name.length > 0 &&
    name !== "." &&
    name !== ".." &&
    !/[/\0]/.test(name) &&
    name.isWellFormed() &&
    utf8(name).length <= 255
  );
}

function parseEntry(v: Json, i: number): FsEntry {
  if (typeof v !== "object" || v === null || Array.isArray(v)) bad(`entry ${i} is not an object`);
  if (Object.keys(v).sort().join(",") !== "digest,kind,mode,name,size") bad(`entry ${i} members`);
  const { name, kind, mode, size, digest } = v;
  if (typeof name !== "string" || !isEntryName(name)) bad(`entry ${i} name`);
  if (typeof kind !== "string" || !KINDS.has(kind)) bad(`entry ${i} kind`);
  if (
    typeof mode !== "number" ||
    !Number.isInteger(mode) ||
    mode < 0 ||
    mode > 0o777 ||
    (kind === "symlink" && mode !== 0o777)
  )
    bad(`entry ${i} mode`);
  if (!isAmount(size) || !isDigest(digest)) bad(`entry ${i} size or digest`);
  return { name, kind: kind as FsKind, mode, size, digest };
}

/** encodeFsDir returns the canonical bytes of a directory object, sorting entries by name bytes. */
export function encodeFsDir(entries: readonly FsEntry[]): Uint8Array {
  const sorted = [...entries].sort((a, b) => compareBytes(utf8(a.name), utf8(b.name)));
  return canonicalBytes({ format: FS_DIR_FORMAT, entries: sorted });
}

/**
 * parseFsDir reads a directory object from its stored bytes (§13.8), refusing non-canonical bytes,
 * unknown members, bad names, kinds, modes, sizes or digests, and entries not strictly sorted by name
 * bytes (duplicates included), all as `BadFsTree`.
 */
export function parseFsDir(bytes: Uint8Array): FsDir {
  let v: Json;
  try {
    v = parseCanonical(bytes, { maxBytes: MAX_DIR_BYTES });
  } catch (e) {
    return bad(`directory object is not canonical JSON (${(e as { code?: string }).code ?? "?"})`);
  }
  if (
    typeof v !== "object" ||
    v === null ||
    Array.isArray(v) ||
    Object.keys(v).sort().join(",") !== "entries,format" ||
    v.format !== FS_DIR_FORMAT
  )
    bad("not a sandbox.fs.dir/1 object");
  if (!Array.isArray(v.entries) || v.entries.length > MAX_DIR_ENTRIES) bad("entries is not a list");
  const entries = v.entries.map(parseEntry);
  for (let i = 1; i < entries.length; i++)
    if (compareBytes(utf8(entries[i - 1]!.name), utf8(entries[i]!.name)) >= 0)
      bad(`entries ${i - 1} and ${i} are not strictly sorted by name`);
  return { format: FS_DIR_FORMAT, entries };
}

/** What a tree walk visits: the directory getter, and a check for each leaf object. */
export interface FsTreeAccess {
  /** The bytes of a directory object (checked against its address by the caller), or null when absent. */
  getDir(address: Digest): Uint8Array | null;
  /** Checks one leaf object (file content or link target) of `size` bytes; throws when absent or wrong. */
  checkLeaf(address: Digest, size: bigint, kind: "file" | "symlink", path: string): void;
}

/** Counts of what a tree walk saw. */
export interface FsTreeStats {
  files: number;
  dirs: number;
  symlinks: number;
  bytes: bigint;
}

/**
 * walkFsTree verifies a snapshot's filesystem DAG from `root` (§13.8): every directory object present
 * (`ObjectMissing`), of its stated size (`ObjectMismatch`) and well-formed (`BadFsTree`, also for
 * nesting deeper than MAX_TREE_DEPTH); every leaf via `access.checkLeaf`. Returns counts.
 */
export function walkFsTree(root: Digest, access: FsTreeAccess): FsTreeStats {
  const stats: FsTreeStats = { files: 0, dirs: 0, symlinks: 0, bytes: 0n };
  const visit = (addr: Digest, path: string, size: bigint | null, depth = 0): void => {
    if (depth > MAX_TREE_DEPTH) bad(`${path} is nested deeper than ${MAX_TREE_DEPTH}`);
    const bytes = access.getDir(addr);
    if (bytes === null)
      throw new SandboxAttestError(
        "ObjectMissing",
        `directory object ${addr} (${path || "/"}) is not in the store`,
      );
    if (size !== null && BigInt(bytes.length) !== size)
      throw new SandboxAttestError(
        "ObjectMismatch",
        `directory ${path} is ${bytes.length} bytes, entry says ${size}`,
      );
    stats.dirs++;
    for (const e of parseFsDir(bytes).entries) {
      const p = `${path}/${e.name}`;
      const n = parseAmount(e.size);
      if (e.kind === "dir") visit(e.digest, p, n, depth + 1);
      else {
        access.checkLeaf(e.digest, n, e.kind, p);
        if (e.kind === "symlink") stats.symlinks++;
        else {
          stats.files++;
          stats.bytes += n;
        }
      }
    }
  };
  visit(root, "", null);
  return stats;
}
