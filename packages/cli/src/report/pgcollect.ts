// `sbx report RUN` on a PostgreSQL run store (issue 18): the same bundle as from a file store, read
// straight from the database. The record's bytes come from the database reader, verified from
// genesis (a row altered there is refused with the reader's code, `HeadMismatch`, `StoreCorrupt`…,
// as `sbx verify RUN` gives it); every object the page needs (attestations, receipts, journals'
// nodes, snapshot trees, leaves within the budget, grant chains) is fetched into memory as stored,
// in passes until the collection asks for nothing new (PgObjectCache), and the page checks it all.
import { HostError } from "@sbx/host";
import { PgObjectCache } from "@sbx/host/pg";
import { SandboxAttestError } from "@sbx/sandbox-attest/runrecord";
import { toHex, parseDigest } from "@sbx/wire";
import { resolvePgRun, withPg } from "@sbx/host/stores";
import type { RunBundle } from "./bundle.ts";
import { collectRun, type CollectOptions } from "./collect.ts";

/** Most passes of one collection (each fetches what the one before asked for). */
const MAX_PASSES = 64;

/**
 * collectPgRun builds the report bundle of run `ref` (an id or a unique prefix) from the database
 * at `url`; with `recordOnly` the record alone. Throws the reader's refusal of the record.
 */
export async function collectPgRun(
  url: string,
  ref: string,
  o: Omit<CollectOptions, "store" | "objects">,
  recordOnly: boolean,
): Promise<RunBundle> {
  return withPg(url, async (pg) => {
    const id = await resolvePgRun(pg, ref);
    const bytes = await pg.readRecordBytes(id);
    if (bytes === null) throw new SandboxAttestError("RecordMissing", `no record ${id} in the store`);
    const name = `${toHex(parseDigest(id))}.runrecord`;
    if (recordOnly) return collectRun(bytes, name, { ...o, store: null });
    const cache = new PgObjectCache(pg, "info");
    const objects = cache.rawObjects();
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const bundle = collectRun(bytes, name, { ...o, store: null, objects });
      if ((await cache.fill()) === 0) return bundle;
    }
    throw new HostError("StoreCorrupt", `run ${id}: its objects did not settle in ${MAX_PASSES} passes`);
  });
}
