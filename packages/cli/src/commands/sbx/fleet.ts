// `sbx fleet …`: fleet records (§16) — build a signed fleet receipt from a directory of run records
// (with a progress bar on stderr), prove an item's membership, verify a proof against a receipt,
// and verify that a later receipt only appended to an earlier one.
import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Envelope } from "@sbx/wire";
import {
  buildFleet,
  fleetItemOfRun,
  openFleetReceipt,
  signFleetReceipt,
  verifyFleetConsistency,
  verifyMembership,
  type ConsistencyProof,
  type FleetItem,
  type MembershipProof,
} from "@sbx/sandbox-attest/fleet";
import { FileStore, verifyRunFile } from "@sbx/host/store";
import { EXIT, parseOptions, printJson, UsageError, type Command, type Io } from "../../command.ts";
import { readKey, readPrincipal } from "@sbx/host/keys";
import { readJsonInput, writeJsonOutput } from "@sbx/host/files";
import { TRUST_HELP, TRUST_OPTIONS, trustOf, verdict, type Trust } from "../../trust.ts";

const EXITS = "exit: 0 ok / valid, 1 invalid or refused (a §16 code), 2 usage error or unusable input";

/** A fleet file: the signed receipt and the items it was built over, in order. */
interface FleetFile {
  readonly receipt: Envelope;
  readonly items: FleetItem[];
}

/** readJson reads one of the JSON files the fleet commands take, within the §2.9 limits. */
function readJson(path: string | undefined, what: string): unknown {
  if (path === undefined) throw new UsageError(`${what} is required`);
  return readJsonInput(path, what);
}

/** openTrusted opens a receipt under the trust given: signed by a trusted host, or by any signer. */
function openTrusted(env: Envelope, t: Trust) {
  return openFleetReceipt(env, t.keys ?? undefined);
}

/** receiptOf accepts a fleet file or a bare receipt envelope. */
function receiptOf(v: unknown): Envelope {
  return typeof v === "object" && v !== null && "receipt" in v ? (v as FleetFile).receipt : (v as Envelope);
}

/** progress draws a bar on stderr: redrawn in place on a terminal, a line per 10% otherwise. */
function progress(io: Io, total: number): (done: number) => void {
  let shown = -1;
  return (done) => {
    const pct = total === 0 ? 100 : Math.floor((done * 100) / total);
    const bar = `[${"#".repeat(Math.floor(pct / 5)).padEnd(20)}] ${done}/${total} run records`;
    if (process.stderr.isTTY) process.stderr.write(`\r${bar}${done === total ? "\n" : ""}`);
    else if (Math.floor(pct / 10) > shown) {
      shown = Math.floor(pct / 10);
      io.err(bar);
    }
  };
}

/** recordItem verifies one run record from files and makes its fleet item and time span (§16.1). */
function recordItem(
  path: string,
  store: FileStore,
  hosts: readonly string[] | undefined,
): { item: FleetItem; start: number; end: number } {
  const { run } = verifyRunFile(path, store, hosts ? { hosts } : {});
  const made = fleetItemOfRun(run, basename(path).replace(/\.runrecord$/, ""));
  return { item: made.item, start: made.start_ms, end: made.end_ms };
}

const build: Command = {
  name: "fleet build",
  summary: "build and sign a fleet receipt over a directory of run records",
  help: `usage: sbx fleet build RECORDS_DIR --key KEYFILE --out FLEET.json [--store DIR] [--name NAME]
                         [--trust FILE|DID…] [--json]
  Verifies every *.runrecord in RECORDS_DIR from files, with the store it points into (default: the
  folder above RECORDS_DIR), and makes one fleet item per closed run: its id (the file name), final
  head, total energy (receipts + idle) and outcome (§16.1), ordered by close time then id, so a
  later build over more runs is an append of an earlier one. Builds the
  (hash, energy-sum) tree, signs the receipt (size, root, total, span) with KEYFILE, and writes
  {receipt, items} to FLEET.json. A progress bar goes to stderr.
  --trust FILE|DID  every record's attestations and receipts must be by one of these hosts
                    (repeatable; a did:key or a key file); without it, any valid signature counts
${EXITS}`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      key: { type: "string" },
      out: { type: "string" },
      store: { type: "string" },
      name: { type: "string" },
      trust: { type: "string", multiple: true },
      json: { type: "boolean" },
    });
    const dir = positionals[0];
    if (dir === undefined || !values.key || !values.out)
      throw new UsageError("RECORDS_DIR, --key and --out are required");
    const key = readKey(values.key);
    const store = FileStore.open(values.store ?? dirname(dir), { readOnly: true });
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".runrecord"))
      .sort();
    const tick = progress(io, files.length);
    const made = files.map((f, i) => {
      const r = recordItem(
        join(dir, f),
        store,
        values.trust?.map((t) => readPrincipal(t)),
      );
      tick(i + 1);
      return r;
    });
    if (files.length === 0) tick(0);
    // Fleet order is the order runs closed (then file name), so a rebuilt fleet with more runs appends.
    made.sort((a, b) => a.end - b.end || (a.item.item < b.item.item ? -1 : 1));
    const fleet = buildFleet(made.map((m) => m.item));
    const span = {
      start_ms: Math.min(...made.map((m) => m.start)),
      end_ms: Math.max(...made.map((m) => m.end)),
    };
    const receipt = signFleetReceipt(fleet, key, {
      fleet: values.name ?? "fleet",
      ...(made.length ? span : { start_ms: 0, end_ms: 0 }),
    });
    writeJsonOutput(values.out, { receipt, items: fleet.items }, { what: "fleet file" });
    const r = openFleetReceipt(receipt);
    if (values.json) printJson(io, { ...r, out: values.out });
    else
      io.out(
        `fleet ${r.fleet}: ${r.size} runs, root ${r.root}, total ${r.total_uj} µJ, span ${r.start_ms}–${r.end_ms}; written to ${values.out}`,
      );
    return Promise.resolve(EXIT.ok);
  },
};

const prove: Command = {
  name: "fleet prove",
  summary: "print the membership proof of one item of a fleet",
  help: `usage: sbx fleet prove FLEET.json ITEM [--out PROOF.json]
  Rebuilds the tree from the fleet file's items, checks it reproduces the signed receipt, and prints
  the membership proof of ITEM (at most ⌈log₂ n⌉ nodes, §16.4).
${EXITS}`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, { out: { type: "string" } });
    const f = readJson(positionals[0], "FLEET.json") as FleetFile;
    const id = positionals[1];
    if (id === undefined) throw new UsageError("ITEM is required");
    const fleet = buildFleet(f.items);
    const proof = fleet.proveMember(fleet.indexOf(id));
    verifyMembership(openFleetReceipt(f.receipt), proof);
    if (values.out) writeJsonOutput(values.out, proof, { what: "proof file" });
    printJson(io, proof);
    return Promise.resolve(EXIT.ok);
  },
};

const verify: Command = {
  name: "fleet verify",
  summary: "verify a membership proof against a signed fleet receipt",
  help: `usage: sbx fleet verify RECEIPT PROOF.json (--trust FILE|DID… | --any-signer) [--json]
  RECEIPT is a fleet file or a bare receipt envelope. Checks the receipt's signature (by a trusted
  host), then the proof (§16.4): the item is in the fleet and its energy is counted in the signed
  total. Each file is refused above 16 MiB before it is read (§2.9).
${TRUST_HELP}
  --host DID        the same as --trust (older name)
  --json            print {valid, trusted, signer, fleet, item, index, size, total_uj}
${EXITS}; 0 also for UNTRUSTED with --any-signer`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      host: { type: "string", multiple: true },
      json: { type: "boolean" },
      ...TRUST_OPTIONS,
    });
    const trust = trustOf(values, values.host);
    const r = openTrusted(receiptOf(readJson(positionals[0], "RECEIPT")), trust);
    const p = readJson(positionals[1], "PROOF.json") as MembershipProof;
    verifyMembership(r, p);
    if (values.json)
      printJson(io, {
        valid: true,
        trusted: trust.keys !== null,
        signer: r.host,
        fleet: r.fleet,
        item: p.item,
        index: p.index,
        size: r.size,
        total_uj: r.total_uj,
      });
    else
      io.out(
        `${verdict(trust)}: ${p.item.item} is run ${p.index} of ${r.size} in fleet ${r.fleet}; its ${p.item.energy_uj} µJ are counted in the ${r.total_uj} µJ signed by ${r.host}`,
      );
    return Promise.resolve(EXIT.ok);
  },
};

const consistency: Command = {
  name: "fleet consistency",
  summary: "verify that a later fleet receipt only appended to an earlier one",
  help: `usage: sbx fleet consistency OLD NEW (--proof PROOF.json | NEW is a fleet file)
                             (--trust FILE|DID… | --any-signer) [--out PROOF.json] [--json]
  OLD and NEW are fleet files or receipt envelopes. The proof is read from --proof, or made from
  NEW's items when NEW is a fleet file. Verifies both signatures (by trusted hosts) and the RFC 9162
  consistency proof over (hash, sum) nodes (§16.5): same fleet, only appended, totals consistent.
${TRUST_HELP}
  --host DID        the same as --trust (older name)
${EXITS}; 0 also for UNTRUSTED with --any-signer`,
  run(args, io) {
    const { values, positionals } = parseOptions(args, {
      proof: { type: "string" },
      host: { type: "string", multiple: true },
      out: { type: "string" },
      json: { type: "boolean" },
      ...TRUST_OPTIONS,
    });
    const trust = trustOf(values, values.host);
    const older = openTrusted(receiptOf(readJson(positionals[0], "OLD")), trust);
    const newFile = readJson(positionals[1], "NEW") as FleetFile | Envelope;
    const newer = openTrusted(receiptOf(newFile), trust);
    let proof: ConsistencyProof;
    if (older.size === 0) proof = { kind: "fleet-consistency", size1: 0, size2: newer.size, path: [] };
    else if (values.proof) proof = readJson(values.proof, "--proof") as ConsistencyProof;
    else if ("items" in newFile) proof = buildFleet(newFile.items).proveConsistency(older.size);
    else throw new UsageError("--proof is required when NEW is a bare receipt");
    verifyFleetConsistency(older, newer, proof);
    if (values.out) writeJsonOutput(values.out, proof, { what: "proof file" });
    if (values.json)
      printJson(io, {
        consistent: true,
        trusted: trust.keys !== null,
        signers: [...new Set([older.host, newer.host])],
        fleet: newer.fleet,
        size1: older.size,
        size2: newer.size,
        total1_uj: older.total_uj,
        total2_uj: newer.total_uj,
      });
    else
      io.out(
        `consistent${trust.keys === null ? " (UNTRUSTED)" : ""}: fleet ${newer.fleet} of ${newer.size} (${newer.total_uj} µJ) only appended to ${older.size} (${older.total_uj} µJ); signed by ${[...new Set([older.host, newer.host])].join(", ")}`,
      );
    return Promise.resolve(EXIT.ok);
  },
};

export const commands: Command[] = [build, prove, verify, consistency];
