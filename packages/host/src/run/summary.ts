// The record of one run as its callers show it (sandbox-attest §6, §7, §8): the energy figure with
// its provenance, the journal root, the receipt and attestation addresses, what the sandbox gave;
// and the record's files written beside the run's output (`sbx run --out`, a standing run's run/).
import type { Digest } from "@sbx/wire";
import { weakestProvenance } from "@sbx/sandbox-attest/energy";
import { writeFilesAt } from "../fsat/index.ts";
import type { RunUnitResult } from "./run.ts";

/**
 * runSummary is the JSON view of one run (`sbx run --json`): the unit, outcome, interval, energy
 * (total, weakest provenance, components, absent sources), journal root and size, receipt and
 * attestation addresses, the signing host, the level stated, the sandbox provided, the limits hit,
 * the gate and the workspace (null for a plain process).
 */
export function runSummary(
  r: RunUnitResult,
  o: { readonly unitId: Digest; readonly host: string; readonly workspace: string | null },
) {
  const rec = r.receipt.receipt;
  return {
    unit_id: o.unitId,
    outcome: r.outcome,
    interval: r.interval,
    energy: {
      total_uj: rec.total_uj,
      provenance: weakestProvenance(rec.components),
      components: rec.components,
      absent: rec.absent,
    },
    journal: { root: r.journal.head().root, events: r.journal.size },
    receipt: r.receiptAddress,
    attestation: r.address,
    host: o.host,
    level: r.level,
    sandbox: r.provided,
    limits_hit: r.limits,
    gate: r.gate,
    workspace: o.workspace,
  };
}

/** What runSummary returns. */
export type RunSummary = ReturnType<typeof runSummary>;

/**
 * writeRunFiles writes the record beside stdout and stderr, which the run wrote there as they
 * arrived: unit.json, attestation.json, receipt.json, journal.json. DIR may lie in the unit's
 * workspace: the files are written relative to DIR's descriptor, reached without following a link
 * (UnsafePath), each to a fresh exclusive temporary renamed over its name, so a link the unit
 * planted there is replaced, never written through (fsat writeFilesAt).
 */
export function writeRunFiles(dir: string, r: RunUnitResult, unit: unknown): void {
  const json = (v: unknown) => Buffer.from(JSON.stringify(v, null, 2) + "\n", "utf8");
  writeFilesAt(dir, [
    { name: "unit.json", bytes: json(unit) },
    { name: "attestation.json", bytes: json(r.attestation) },
    { name: "receipt.json", bytes: json(r.receipt.envelope) },
    { name: "journal.json", bytes: json({ head: r.journal.head(), events: r.journal.events }) },
  ]);
}
