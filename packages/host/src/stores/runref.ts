// A run named on the command line: its full id (head₀, `blake3:<64 hex>`) or a unique prefix of it,
// with or without `blake3:`, among the records of the run store.
import { existsSync } from "node:fs";
import type { Digest } from "@sbx/wire";
import { HostError } from "../errors.ts";
import type { FileStore } from "../store/index.ts";

/** resolveRun finds the one run `ref` names: `RunNotFound` for none, `RunAmbiguous` for several. */
export function resolveRun(store: FileStore, ref: string | undefined): Digest {
  return resolveRunIn(store.recordIds(), ref, `store ${store.root}`);
}

/**
 * resolveStoreRun is resolveRun over any run store (a folder, or PostgreSQL's records): the one rule
 * of `sbx suspend`, `resume` and `close` as of `sbx show` and `export`.
 */
export async function resolveStoreRun(
  store: { recordIds(): Digest[] | Promise<Digest[]>; readonly root: string },
  ref: string | undefined,
): Promise<Digest> {
  return resolveRunIn(await store.recordIds(), ref, `store ${store.root}`);
}

/**
 * namesRun tells whether an argument of `sbx verify` or `sbx report`, which take a record file or a
 * run, names a run: no such path exists, and it is written as a run id or a prefix (hex digits, or
 * anything after `blake3:`, which resolveRunIn then checks). A record file keeps its path: a file
 * named like a prefix is the file.
 */
export function namesRun(arg: string): boolean {
  return !existsSync(arg) && (arg.startsWith("blake3:") || /^[0-9a-f]{1,64}$/.test(arg));
}

/** resolveRunIn is resolveRun over a list of run ids (the runs of `where`). */
export function resolveRunIn(ids: readonly Digest[], ref: string | undefined, where: string): Digest {
  if (ref === undefined || ref === "")
    throw new HostError("BadRunRef", "RUN is required (a run id or a unique prefix of one)");
  const hex = ref.startsWith("blake3:") ? ref.slice(7) : ref;
  if (!/^[0-9a-f]{1,64}$/.test(hex))
    throw new HostError("BadRunRef", `RUN ${ref} is not a run id or a prefix of one`);
  const hits = ids.filter((id) => id.startsWith(`blake3:${hex}`));
  if (hits.length === 0) throw new HostError("RunNotFound", `no run ${ref} in ${where}`);
  if (hits.length > 1)
    throw new HostError("RunAmbiguous", `${ref} names ${hits.length} runs: give more of the id`);
  return hits[0]!;
}
