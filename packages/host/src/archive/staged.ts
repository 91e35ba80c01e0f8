// §13.13 The plain objects of a run archive being read. An archive already in memory keeps them as
// its own bytes; one read from a stream (a file, a pipe) stages each on disk as it is read — hashed
// and written piece by piece into a nameless temporary file (made in $TMPDIR) — so memory never
// holds them and an importer's memory stays bounded by the record and the signed members
// (ARCHIVE_LIMITS maxHeldBytes), whatever the archive's size. The disk it takes is at most the
// archive's own size, and it is freed when the import is done or refused, or its process dies.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBlake3, digestBytes, formatDigest, type Digest } from "@sbx/wire";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import type { MemberSink } from "./tar.ts";

/** A run archive's plain objects by address, each checked to hash to it. */
export interface PlainObjects {
  readonly size: number;
  get(a: Digest): Uint8Array | null;
  addresses(): Digest[];
  /** Removes what was staged on disk (nothing to do in memory); idempotent. */
  dispose(): void;
}

/** What openRunArchive fills: whole members (in memory), or a sink per member (staged). */
export interface PlainHolder extends PlainObjects {
  /** Adds a member read whole; `ObjectMismatch` when its bytes are not its name's address. */
  add(name: string, address: Digest, data: Uint8Array): void;
  /** A sink for a member read in pieces, or undefined when members are read whole. */
  sink(name: string, address: Digest): MemberSink | undefined;
}

function mismatch(name: string): never {
  throw new SandboxAttestError("ObjectMismatch", `member ${name} does not hash to its name`);
}

/** inMemory holds whole members (an archive given as bytes: they are views of it). */
export function inMemory(): PlainHolder {
  const m = new Map<Digest, Uint8Array>();
  return {
    get size() {
      return m.size;
    },
    get: (a) => m.get(a) ?? null,
    addresses: () => [...m.keys()],
    dispose: () => undefined,
    add(name, address, data) {
      if (digestBytes(data) !== address) mismatch(name);
      m.set(address, data);
    },
    sink: () => undefined,
  };
}

/**
 * staged stages every member on disk as it is read, one after the other in one file that has no
 * name from the start (made in a fresh folder, then the name and the folder removed, the file kept
 * open), so nothing is left behind whatever ends the process, SIGKILL included.
 */
export function staged(): PlainHolder {
  const dir = mkdtempSync(join(tmpdir(), "sbx-import-"));
  let fd: number;
  try {
    fd = openSync(join(dir, "objects"), "wx+", 0o600);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const at = new Map<Digest, { readonly off: number; readonly len: number }>();
  let end = 0;
  let open = true;
  return {
    get size() {
      return at.size;
    },
    get(a) {
      const x = at.get(a);
      if (x === undefined) return null;
      const b = new Uint8Array(x.len);
      for (let got = 0; got < x.len;) {
        const n = readSync(fd, b, got, x.len - got, x.off + got);
        if (n === 0) throw new RangeError("staged: the staging file is short");
        got += n;
      }
      return b;
    },
    addresses: () => [...at.keys()],
    dispose() {
      if (open) closeSync(fd);
      open = false;
    },
    add: () => {
      throw new RangeError("staged: members are read in pieces");
    },
    sink(name, address) {
      const off = end;
      const h = createBlake3();
      return {
        data(piece) {
          h.update(piece);
          for (let k = 0; k < piece.length;) k += writeSync(fd, piece, k, piece.length - k, end + k);
          end += piece.length;
        },
        end() {
          if (formatDigest(h.digest()) !== address) mismatch(name);
          at.set(address, { off, len: end - off });
        },
      };
    },
  };
}
