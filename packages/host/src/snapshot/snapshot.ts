// §13.8 Snapshot of a real workspace directory into the file-backed store: each file's content and
// each symlink target becomes an object, each directory a canonical directory object, bottom up; the
// root directory object's address is the snapshot's filesystem root. Never follows symbolic links.
//
// Refused: device nodes, FIFOs and sockets (`UnsupportedFileKind`); setuid, setgid and sticky bits
// (`UnsupportedMode`: the mode would not survive restore unchanged); names that are not UTF-8 or
// longer than 255 bytes, and link targets that are not UTF-8 (`UnsupportedName`). Not recorded:
// owners, times, extended attributes; hard links are stored as separate files (same content object).
import { lstatSync, readdirSync, readlinkSync, type Stats } from "node:fs";
import { join } from "node:path";
import { formatAmount, type Digest } from "@sbx/wire";
import { encodeFsDir, isEntryName, type FsEntry } from "@sbx/sandbox-attest/runrecord";
import { HostError } from "../errors.ts";
import type { FileStore } from "../store/filestore.ts";

/** What a snapshot produced: the root and what it holds. */
export interface SnapshotResult {
  readonly fs_root: Digest;
  readonly files: number;
  readonly dirs: number;
  readonly symlinks: number;
  readonly bytes: number;
}

const strict = new TextDecoder("utf-8", { fatal: true });

function entryName(raw: Buffer, dir: string): string {
  let name: string;
  try {
    name = strict.decode(raw);
  } catch {
    throw new HostError("UnsupportedName", `a name in ${dir} is not UTF-8`);
  }
  if (!isEntryName(name))
    throw new HostError("UnsupportedName", `${JSON.stringify(name)} in ${dir} cannot be an entry name`);
  return name;
}

function permBits(st: Stats, path: string): number {
  if ((st.mode & 0o7000) !== 0)
    throw new HostError(
      "UnsupportedMode",
      `${path} has setuid, setgid or sticky bits (${(st.mode & 0o7777).toString(8)})`,
    );
  return st.mode & 0o777;
}

/**
 * snapshotDir stores the tree under `dir` (§13.8) and returns its filesystem root; durable when it
 * returns (deferred directory fsyncs are flushed). Throws the HostError codes listed above.
 */
export function snapshotDir(store: FileStore, dir: string): SnapshotResult {
  const acc = { files: 0, dirs: 0, symlinks: 0, bytes: 0 };
  const visit = (path: string): { digest: Digest; size: number } => {
    const entries: FsEntry[] = [];
    for (const raw of readdirSync(path, { encoding: "buffer" })) {
      const name = entryName(raw, path);
      const p = join(path, name);
      const st = lstatSync(p);
      if (st.isFile()) {
        const { address, size } = store.putFileSync(p, true);
        entries.push({
          name,
          kind: "file",
          mode: permBits(st, p),
          size: formatAmount(BigInt(size)),
          digest: address,
        });
        acc.files++;
        acc.bytes += size;
      } else if (st.isDirectory()) {
        const child = visit(p);
        entries.push({
          name,
          kind: "dir",
          mode: permBits(st, p),
          size: formatAmount(BigInt(child.size)),
          digest: child.digest,
        });
      } else if (st.isSymbolicLink()) {
        const target = readlinkSync(p, { encoding: "buffer" });
        try {
          strict.decode(target);
        } catch {
          throw new HostError("UnsupportedName", `the target of ${p} is not UTF-8`);
        }
        entries.push({
          name,
          kind: "symlink",
          mode: 0o777,
          size: formatAmount(BigInt(target.length)),
          digest: store.putObjectSync(target, true),
        });
        acc.symlinks++;
      } else throw new HostError("UnsupportedFileKind", `${p} is not a file, directory or symbolic link`);
    }
    const bytes = encodeFsDir(entries);
    acc.dirs++;
    return { digest: store.putObjectSync(bytes, true), size: bytes.length };
  };
  const root = visit(dir).digest;
  store.syncPending();
  return { fs_root: root, ...acc };
}
