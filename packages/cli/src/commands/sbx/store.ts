// `sbx store init` and `sbx store copy`: set up the PostgreSQL store many hosts share (its schema
// migrations) and move runs with every object, and the ledgers, between a store directory and
// PostgreSQL (§13.7).
import { FileStore } from "@sbx/host/store";
import { copyStore, isPgUrl, PgStore, redactUrl, type AnyStore } from "@sbx/host/pg";
import { EXIT, parseOptions, printJson, UsageError, type Command } from "../../command.ts";
import { closeStore, openStore, runStoreDir, runStoreUrl } from "@sbx/host/stores";

const initHelp = `usage: sbx store init [--store postgres://USER@HOST:PORT/DB | --store DIR] [--json]
  Makes the store ready: for PostgreSQL, applies the schema migrations this sbx needs, in one
  transaction under a lock (safe to run from several hosts at once, and again: nothing is applied
  twice); for a directory, creates the file store's layout. The store is --store, else SBX_STORE,
  else the file store under $XDG_DATA_HOME/sbx.
  --store URL|DIR  a postgres:// or postgresql:// connection string, or a store directory
  --json           print {store, kind, schema_before, schema_after}
exit: 0 ready, 1 refused (a database of a newer schema), 2 usage error or the store cannot be reached`;

const copyHelp = `usage: sbx store copy --from DIR|URL --to DIR|URL [--json]
  Copies every object, signed object and run record of one store into another (a store directory
  or a postgres:// connection string, either way round). Objects stream in chunks and must arrive
  under the address they left with (ObjectMismatch); records are replayed segment by segment through
  the destination's checks and read back byte for byte. Run again after an interruption: what is
  already there is kept and a record continues from its head; a destination record that is not a
  prefix of the source's is refused (RecordDiverged). The ledgers (spend, revocation, mint,
  checkpoint, pool: the database's logs, or a directory's DIR/logs/NAME folders) are copied too,
  every link verified on the way out (LogBroken), continued from the destination's head, read back
  and compared (LogDiverged when the destination's ledger is not a prefix of the source's).
  A PostgreSQL destination must be initialised (sbx store init); a directory destination is created.
  --from DIR|URL   the source store
  --to DIR|URL     the destination store
  --json           print {objects, signed, records, segments, bytes, logs, entries}
exit: 0 copied, 1 refused (a mismatch or divergence), 2 usage error or a store cannot be used`;

async function openEither(where: string, create: boolean): Promise<AnyStore> {
  return isPgUrl(where) ? PgStore.open(where) : FileStore.open(where, { create });
}

const init: Command = {
  name: "store init",
  summary: "apply the PostgreSQL store's schema migrations, or create a store directory",
  help: initHelp,
  async run(args, io) {
    const { values: v } = parseOptions(args, { store: { type: "string" }, json: { type: "boolean" } }, false);
    const url = runStoreUrl(v.store);
    if (url === null) {
      const dir = runStoreDir(v.store);
      await closeStore(await openStore(dir, true));
      if (v.json) printJson(io, { store: dir, kind: "directory" });
      else io.out(`store ready: ${dir}`);
      return EXIT.ok;
    }
    const [before, after] = await PgStore.init(url);
    if (v.json)
      printJson(io, { store: redactUrl(url), kind: "postgres", schema_before: before, schema_after: after });
    else
      io.out(
        before === after
          ? `store ready: ${redactUrl(url)} (schema ${String(after)}, nothing to apply)`
          : `store ready: ${redactUrl(url)} (schema ${String(before)} → ${String(after)})`,
      );
    return EXIT.ok;
  },
};

const copy: Command = {
  name: "store copy",
  summary:
    "copy runs with every object, and the ledgers, between a store directory and PostgreSQL, verified on arrival",
  help: copyHelp,
  async run(args, io) {
    const { values: v } = parseOptions(
      args,
      { from: { type: "string" }, to: { type: "string" }, json: { type: "boolean" } },
      false,
    );
    if (!v.from || !v.to) throw new UsageError("--from and --to are required");
    const from = await openEither(v.from, false);
    try {
      const to = await openEither(v.to, true);
      try {
        const r = await copyStore(from, to);
        if (v.json) printJson(io, r);
        else
          io.out(
            `copied ${String(r.records)} records (${String(r.segments)} segments appended), ${String(r.objects)} objects (${String(r.bytes)} bytes new), ${String(r.signed)} signed objects, ${String(r.logs)} ledgers (${String(r.entries)} entries appended)`,
          );
        return EXIT.ok;
      } finally {
        await closeStore(to);
      }
    } finally {
      await closeStore(from);
    }
  },
};

export const commands: Command[] = [init, copy];
