// §5.5.5 Loader handling by content: the set of digests of dynamic loaders. A process whose
// executable has one of these digests (under any name) is the loader run as a program, and every
// ELF file it opens is decided as executed (route "loader").
import { readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Digest } from "@sbx/wire";
import { hashFile } from "./hash.ts";

const LIB_DIRS = [
  "/lib64",
  "/lib",
  "/usr/lib64",
  "/usr/lib",
  "/lib/x86_64-linux-gnu",
  "/lib/aarch64-linux-gnu",
  "/usr/lib/x86_64-linux-gnu",
];

const LOADER_NAME = /^ld-(linux|musl)|^ld\.so|^ld64\.so/;
/** Each library directory's loader names, with the directory's identity and times when listed. */
const listed = new Map<string, { readonly key: string; readonly names: readonly string[] }>();

/**
 * loaderNames lists the loader names in `dir`. A directory is read again only when its identity
 * or its mtime/ctime changed (adding, removing or renaming an entry changes them), so a gated run
 * does not read /usr/lib's thousands of names each time; what the names point at is resolved and
 * hashed by every LoaderSet afresh.
 */
function loaderNames(dir: string): readonly string[] {
  let key: string;
  try {
    const st = statSync(dir);
    key = `${String(st.dev)}:${String(st.ino)}:${String(st.mtimeMs)}:${String(st.ctimeMs)}`;
  } catch {
    return [];
  }
  const hit = listed.get(dir);
  if (hit?.key === key) return hit.names;
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => LOADER_NAME.test(n));
  } catch {
    return [];
  }
  listed.set(dir, { key, names });
  return names;
}

/** candidateLoaders lists the host's loader files: ld-linux*, ld-musl*, ld.so*, and /bin/sh's PT_INTERP. */
export function candidateLoaders(): string[] {
  const found = new Set<string>();
  for (const dir of LIB_DIRS)
    for (const n of loaderNames(dir))
      try {
        found.add(realpathSync(join(dir, n)));
      } catch {
        /* dangling link */
      }
  return [...found].sort();
}

/** LoaderSet holds loader digests: the host's loaders, and every PT_INTERP the gate has met. */
export class LoaderSet {
  readonly digests = new Set<Digest>();
  private readonly seenPaths = new Set<string>();

  /** learn hashes a loader path once and adds its digest; unreadable paths are ignored. */
  async learn(path: string): Promise<void> {
    if (this.seenPaths.has(path)) return;
    this.seenPaths.add(path);
    try {
      this.digests.add((await hashFile(path)).digest);
    } catch {
      /* a PT_INTERP that does not exist on the host cannot run here either */
    }
  }

  /** loadHost learns every candidate loader of this host (§5.5.5). */
  async loadHost(): Promise<this> {
    for (const p of candidateLoaders()) await this.learn(p);
    return this;
  }

  /** has reports whether a digest is a known loader. */
  has(d: Digest): boolean {
    return this.digests.has(d);
  }
}
