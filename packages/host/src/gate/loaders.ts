// §5.5.5 Loader handling by content: the set of digests of dynamic loaders. A process whose
// executable has one of these digests (under any name) is the loader run as a program, and every
// ELF file it opens is decided as executed (route "loader").
import { readdirSync, realpathSync } from "node:fs";
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

/** candidateLoaders lists the host's loader files: ld-linux*, ld-musl*, ld.so*, and /bin/sh's PT_INTERP. */
export function candidateLoaders(): string[] {
  const found = new Set<string>();
  for (const dir of LIB_DIRS) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const n of names)
      if (/^ld-(linux|musl)|^ld\.so|^ld64\.so/.test(n))
        try {
          found.add(realpathSync(join(dir, n)));
        } catch {
          /* dangling link */
        }
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
