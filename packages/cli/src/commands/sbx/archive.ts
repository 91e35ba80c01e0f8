// `sbx export RUN > run.tar` and `sbx import run.tar`: a run and every object it references in one
// ustar file (§13.13), verified completely before anything is written to the importing store.
import { closeSync, readSync, writeSync } from "node:fs";
import { ARCHIVE_LIMITS, exportRun, importRunArchive } from "@sbx/host/archive";
import {
  EXIT,
  parseOptions,
  printJson,
  UsageError,
  writeBytes,
  type Command,
  type Io,
} from "../../command.ts";
import { openInput, writeOutput } from "@sbx/host/files";
import { resolveRun, resolveStoreRun } from "@sbx/host/stores";
import { openAnyRunStore, openRunStore, readableRunStore, runStoreUrl } from "@sbx/host/stores";
import { SharedRunStore } from "@sbx/host/pg";
import { handOffRun } from "./lifecycle/handoff.ts";
import { importIntoShared } from "./archive-pg.ts";
import { TRUST_HELP, TRUST_OPTIONS, trustOf, verdict } from "../../trust.ts";

const STORE_HELP = `  --store DIR       the run store (default: $SBX_STORE, else $XDG_DATA_HOME/sbx or ~/.local/share/sbx)`;

const exportCmd: Command = {
  name: "export",
  summary: "write a run and every object it references as one archive (ustar)",
  help: `usage: sbx export RUN [--move TO [--key FILE]] [--store DIR] [--out FILE]
  Writes run RUN (its id, or a unique prefix of it) from the run store as one archive: the record
  and every object it references (attestations, receipts, snapshot trees, manifests, and the nodes
  of each interval's journal the store kept, §13.13.1), which
  \`sbx import\` on another host verifies and stores (sandbox-attest §13.13). The run must verify and
  every object must be in the store (ArchiveIncomplete otherwise). To stdout, or to FILE (written
  to a temporary sibling, fsynced, renamed into place). Without --move the run stays resumable in
  this store (said on stderr).
  --move TO         hand the run off (§13.2a): a parked run's record here is ended by a hand-off
                    naming TO (the target store or host key, 1 to 256 characters) and the head
                    handed off, signed with the run's key on this host (or --key FILE); this store
                    then refuses to resume, suspend, close or append to it (RunMoved). The archive
                    carries the record at the head handed off, which the target resumes from.
                    Exporting a moved run again writes the same archive.
  --key FILE        the key that signs the hand-off (default: the run's key on this host)
${STORE_HELP}
exit: 0 written, 1 refused (the code names why), 2 usage error, unknown run or unusable store`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      store: { type: "string" },
      out: { type: "string" },
      move: { type: "string" },
      key: { type: "string" },
    });
    if (positionals.length !== 1) throw new UsageError("exactly one RUN is required");
    if (values.key !== undefined && values.move === undefined) throw new UsageError("--key goes with --move");
    if (values.move !== undefined) await moveRun(values.store, positionals[0]!, values.move, values.key, io);
    const { store, done } = await readableRunStore(values.store, positionals[0] ?? null);
    await done();
    const id = resolveRun(store, positionals[0]);
    const bytes = exportRun(store, id);
    if (values.move === undefined && store.readRunSync(id).record.movedTo === null)
      io.err(`sbx: run ${id} stays resumable in this store (sbx export --move TO hands it off)`);
    if (values.out !== undefined) writeOutput(values.out, bytes, { what: "archive" });
    else if (io.bytes) writeBytes(io, "out", bytes);
    else for (let at = 0; at < bytes.length;) at += writeSync(1, bytes, at);
    return EXIT.ok;
  },
};

// `--move TO`: the hand-off is appended before the archive is written; a crash between the two
// leaves a moved run whose archive a later `sbx export` writes again (the record at the head handed off).
async function moveRun(
  given: string | undefined,
  ref: string,
  to: string,
  keyFile: string | undefined,
  io: Io,
): Promise<void> {
  if (to.length === 0 || to.length > 256) throw new UsageError("--move TO is 1 to 256 characters");
  const store = await openAnyRunStore(given, false);
  try {
    const id = await resolveStoreRun(store, ref);
    const h = await handOffRun(store, id, to, keyFile, (l) => io.err(`sbx: ${l}`));
    io.err(`sbx: run ${id} moved to ${JSON.stringify(to)} at head ${h.handed}, signed by ${h.signer}`);
  } finally {
    if (store instanceof SharedRunStore) await store.close();
  }
}

const importCmd: Command = {
  name: "import",
  summary: "verify a run archive completely, then store its objects and record",
  help: `usage: sbx import ARCHIVE (--trust FILE|DID… | --any-signer) [--store DIR] [--json]
  Reads an archive written by \`sbx export\` (at most ${ARCHIVE_LIMITS.maxBytes / 1024 / 1024} MiB, refused from its size
  before it is read) and verifies all of it before writing anything (sandbox-attest §13.13): the
  container byte for byte (BadArchive, DuplicateMember), every member's name (UnexpectedMember:
  only the format, one record, objects and signed objects, each named by its address; no paths),
  every object against its address (ObjectMismatch), the record from genesis, every attestation and
  receipt signature as \`sbx verify\` checks them, every snapshot tree, that every object the run
  references is there (ArchiveIncomplete) and nothing else is. Then stores the objects durably and
  publishes the record last, atomically: killed at any point, the store shows the run whole or not
  at all. A store already holding this exact record exits 0; another record of the same id is
  refused (RecordExists).
${TRUST_HELP}
${STORE_HELP}
  --json            print {id, head, created, objects, signers, trusted}
exit: 0 imported (or already held), 1 refused (the code names why), 2 usage error or unusable input`,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      store: { type: "string" },
      json: { type: "boolean" },
      ...TRUST_OPTIONS,
    });
    if (positionals.length !== 1) throw new UsageError("exactly one ARCHIVE is required");
    const trust = trustOf(values);
    // Read member by member (never whole), and the store opened only once the archive verified.
    const fd = openInput(positionals[0]!, "archive", ARCHIVE_LIMITS.maxBytes);
    const read = (buf: Uint8Array): number => readSync(fd, buf, 0, buf.length, null);
    const url = runStoreUrl(values.store);
    const r = await (async () => {
      try {
        return url !== null
          ? await importIntoShared(url, read, trust.keys ?? undefined)
          : await importRunArchive(() => openRunStore(values.store, true), read, trust.keys ?? undefined);
      } finally {
        closeSync(fd);
      }
    })();
    const signers = r.signers;
    if (values.json === true) printJson(io, { ...r, trusted: trust.keys !== null });
    else
      io.out(
        `${r.created ? "imported" : "already held"}: run ${r.id} at head ${r.head}, ${r.objects} objects; signers ${signers.join(", ") || "none"}; ${verdict(trust)}`,
      );
    return EXIT.ok;
  },
};

export const commands: Command[] = [exportCmd, importCmd];
