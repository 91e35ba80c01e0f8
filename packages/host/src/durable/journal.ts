// §13.7.3 on this host: each active interval's journal is kept in the run's store as the nodes of
// its tree (`journalNodes`), content-addressed objects found from the tree head the interval's
// attestation signs. Kept before the attestation and its segment, each object durable before the
// next step, so an executed segment never cites a journal that a crash lost; `sbx report RUN` then
// shows and verifies every interval's events without `--journal`.
import type { Digest } from "@sbx/wire";
import { journalNodes, type JournalEvent } from "@sbx/sandbox-attest/journal";
import type { FileStore } from "../store/index.ts";

/**
 * Where a journal is kept: the file store (each object fsynced, the directories synced once at
 * the end), or any store's putObject (the PostgreSQL store: one transaction per object).
 */
export type JournalStore =
  Pick<FileStore, "putObjectSync" | "syncPending"> | { putObject(bytes: Uint8Array): Promise<Digest> };

/** keepJournal stores the nodes of a journal's tree; returns the root's address and the node count. */
export async function keepJournal(
  store: JournalStore,
  events: readonly JournalEvent[],
): Promise<{ root: Digest | null; nodes: number }> {
  const nodes = journalNodes(events);
  if ("putObjectSync" in store) {
    for (const n of nodes) store.putObjectSync(n.bytes, true);
    store.syncPending();
  } else for (const n of nodes) await store.putObject(n.bytes);
  return { root: nodes.at(-1)?.address ?? null, nodes: nodes.length };
}
