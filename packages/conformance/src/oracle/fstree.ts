// Output oracle for valid `fstree.root` cases (sandbox-attest §13.8): the directory DAG built
// literally from the section's text, sharing only the §2 wire primitives with the libraries. Each
// directory is the JCS object {entries, format}; each entry {digest, kind, mode, name, size}, a
// symlink's mode 0o777, sorted by the UTF-8 bytes of the names; `dirs` counts every directory
// object, the root's included. Nothing is imported from @sbx/sandbox-attest.
import { canonicalBytes, digestBytes, utf8 } from "@sbx/wire";
import type { Json, JsonObject } from "@sbx/wire";

interface Built {
  readonly bytes: Uint8Array;
  readonly dirs: number;
}

function child(e: JsonObject): { entry: Json; dirs: number } {
  const kind = e.kind as string;
  const built: Built =
    kind === "dir"
      ? directory(e.entries as JsonObject[])
      : {
          bytes: kind === "file" ? Buffer.from(e.content_hex as string, "hex") : utf8(e.target as string),
          dirs: 0,
        };
  const entry = {
    digest: digestBytes(built.bytes),
    kind,
    mode: kind === "symlink" ? 0o777 : (e.mode as number),
    name: e.name as string,
    size: String(built.bytes.length),
  };
  return { entry, dirs: built.dirs };
}

function directory(entries: readonly JsonObject[]): Built {
  const sorted = [...entries].sort((a, b) => Buffer.compare(utf8(a.name as string), utf8(b.name as string)));
  const kids = sorted.map(child);
  const bytes = canonicalBytes({ entries: kids.map((k) => k.entry), format: "sandbox.fs.dir/1" });
  return { bytes, dirs: 1 + kids.reduce((n, k) => n + k.dirs, 0) };
}

/** fsTreeOutputOracle computes a valid `fstree.root` case's output, or undefined for another op. */
export function fsTreeOutputOracle(op: string, input: Json): Json | undefined {
  if (op !== "fstree.root") return undefined;
  const root = directory((input as JsonObject).entries as JsonObject[]);
  return { fs_root: digestBytes(root.bytes), dirs: root.dirs };
}
