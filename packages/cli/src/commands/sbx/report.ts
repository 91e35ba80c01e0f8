// `sbx report RUN|FILE`: one self-contained HTML page that re-verifies a run record and its objects,
// or a fleet file and its membership proofs, in the reader's browser (issue 19).
import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { isDigest, type Json } from "@sbx/wire";
import { FileStore } from "@sbx/host/store";
import { EXIT, parseOptions, UsageError, type Command } from "../../command.ts";
import { CliError } from "../../errors.ts";
import { readInput, readJsonInput, writeOutput } from "@sbx/host/files";
import { readPrincipal } from "@sbx/host/keys";
import { collectFleet, collectRun } from "../../report/collect.ts";
import type { RunBundle } from "../../report/bundle.ts";
import { reportHtml } from "../../report/html.ts";
import { collectPgRun } from "../../report/pgcollect.ts";
import { namesRun, resolveRun, runStoreDir, runStoreUrl } from "@sbx/host/stores";

const EMBED_MAX = 16 * 1024 * 1024;
const RECORD_MAX = 512 * 1024 * 1024;

const help = `usage: sbx report RUN|RECORD.runrecord|FLEET.json [--out report.html] [--trust FILE|DID…]
                  [--store DIR | --record-only] [--journal FILE…] [--embed-max BYTES] [--head DIGEST]
  Writes one self-contained HTML page (styles, script and data inlined; it fetches nothing) that
  verifies in the reader's browser, with the project's own wire code (BLAKE3, canonical JSON, DSSE
  Ed25519), everything it shows.
  A run record (a file, or RUN: a run's id, its genesis head, or a unique prefix of it, with or
  without blake3:, found in the run store as sbx show finds it; a path that exists is the file): the
  record and every object it references that the store holds are embedded as stored; the page checks
  every head, every signature, every binding and every snapshot tree, and shows a verdict per object
  and for the run (VALID, UNTRUSTED without a trusted key, INVALID with the code), a timeline of the
  segments, energy per segment by provenance with idle energy where the run was parked, the journal
  events and exec decisions of each interval (searchable), and the objects with their addresses. The
  journal of an interval is the one the store keeps (durable runs keep each interval's,
  sandbox-attest §13.7.3), walked from the root its attestation signs and checked node by node in
  the page.
  A fleet file (sbx fleet build): the receipt's verdict, the items by energy, and a membership proof
  checked in the page for any item the reader picks, or one the reader pastes.
  --out FILE        the page to write (default report.html)
  --trust FILE|DID  a trusted host key to embed (repeatable); the reader may replace them in the page
  --store DIR       the store the record points into (default: the store the record file lives in;
                    for a RUN: --store, else SBX_STORE, else the XDG default); for a RUN, a
                    postgres:// connection string reads the run and its objects from that database
  --record-only     embed the record alone
  --journal FILE    a journal ({head, events} as sbx run --out writes it, or a list of events) to embed
                    (repeatable); the page shows it for the interval whose journal root it recomputes to
                    (for a run whose store does not keep its journals)
  --embed-max BYTES most bytes of snapshot files and memory images to embed (default ${EMBED_MAX});
                    those left out are listed as not embedded, never counted as checked
  --head DIGEST     the head the record must end at; the page checks it (HeadMismatch)
exit: 0 written, 2 usage error or unusable input (RunNotFound, RunAmbiguous: an unknown or
      ambiguous RUN)`;

function findStore(recordPath: string): string | null {
  const root = dirname(dirname(resolve(recordPath)));
  return basename(dirname(resolve(recordPath))) === "records" && existsSync(join(root, "sbx-store"))
    ? root
    : null;
}

function openStore(root: string): FileStore {
  try {
    return FileStore.open(root, { readOnly: true });
  } catch (e) {
    throw new CliError("Unreadable", `cannot open store ${root}: ${(e as Error).message}`, { cause: e });
  }
}

/** journalEvents reads a journal file: {head, events} or a bare list of events. */
function journalEvents(path: string): Json {
  const v = readJsonInput(path, "journal");
  if (Array.isArray(v)) return v;
  if (typeof v === "object" && v !== null && Array.isArray(v["events"])) return v["events"];
  throw new CliError("Usage", `journal ${path} is neither {head, events} nor a list of events`);
}

function embedMax(v: string | undefined): number {
  if (v === undefined) return EMBED_MAX;
  if (!/^\d{1,15}$/.test(v)) throw new UsageError("--embed-max must be a number of bytes");
  return Number(v);
}

interface Values {
  readonly store?: string | undefined;
  readonly "record-only"?: boolean | undefined;
  readonly journal?: string[] | undefined;
  readonly "embed-max"?: string | undefined;
}

function runSource(arg: string, v: Values): { path: string; store: FileStore | null } {
  if (namesRun(arg)) {
    const store = openStore(runStoreDir(v.store));
    const path = store.recordPath(resolveRun(store, arg));
    return { path, store: v["record-only"] === true ? null : store };
  }
  if (v["record-only"] === true) return { path: arg, store: null };
  const root = v.store ?? findStore(arg);
  if (root === null)
    throw new UsageError("no store found beside the record: pass --store DIR or --record-only");
  return { path: arg, store: openStore(root) };
}

function whatOf(bundle: RunBundle): string {
  const omitted = Object.keys(bundle.omitted).length;
  return `run: ${Object.keys(bundle.signed).length} signed and ${Object.keys(bundle.objects).length} other objects embedded${omitted ? `, ${omitted} left out (over --embed-max)` : ""}`;
}

function isFleetFile(path: string): boolean {
  return path.endsWith(".json");
}

export const command: Command = {
  name: "report",
  summary: "write a self-contained HTML report that re-verifies a run or a fleet in the browser",
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions(args, {
      out: { type: "string" },
      trust: { type: "string", multiple: true },
      store: { type: "string" },
      "record-only": { type: "boolean" },
      journal: { type: "string", multiple: true },
      "embed-max": { type: "string" },
      head: { type: "string" },
    });
    if (values.head !== undefined && !isDigest(values.head))
      throw new UsageError("--head must be a blake3:<64 hex> digest");
    if (positionals.length !== 1)
      throw new UsageError("exactly one run, record file or fleet file is required");
    const arg = positionals[0]!;
    const out = values.out ?? "report.html";
    const trust = (values.trust ?? []).map((t) => readPrincipal(t));
    // A run: its id or a unique prefix, found by the rule of sbx show (runref.ts); else a file.
    const run = namesRun(arg);
    if (!run) {
      if (!existsSync(arg)) throw new CliError("Unreadable", `cannot read ${arg}: no such file`);
      if (!statSync(arg).isFile()) throw new CliError("NotAFile", `${arg} is not a file`);
    }
    let html: string;
    let what: string;
    // A run with a PostgreSQL run store: the run and its objects read from the database.
    const url = run ? runStoreUrl(values.store) : null;
    if (url !== null) {
      const opts = {
        embedMax: embedMax(values["embed-max"]),
        journals: (values.journal ?? []).map(journalEvents),
        trust,
        expectHead: values.head,
      };
      const bundle = await collectPgRun(url, arg, opts, values["record-only"] === true);
      html = reportHtml(bundle);
      what = whatOf(bundle);
    } else if (!run && isFleetFile(arg)) {
      const bundle = collectFleet(readInput(arg, "fleet file", 16 * 1024 * 1024), basename(arg), trust);
      html = reportHtml(bundle);
      what = "fleet";
    } else {
      const src = runSource(arg, values);
      const bundle = collectRun(readInput(src.path, "record", RECORD_MAX), basename(src.path), {
        store: src.store,
        embedMax: embedMax(values["embed-max"]),
        journals: (values.journal ?? []).map(journalEvents),
        trust,
        expectHead: values.head,
      });
      html = reportHtml(bundle);
      what = whatOf(bundle);
    }
    writeOutput(out, html, { what: "report" });
    io.out(
      `report written to ${out} (${what}, ${Buffer.byteLength(html)} bytes); open it in a browser to verify`,
    );
    return EXIT.ok;
  },
};
