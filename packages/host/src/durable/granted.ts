// A durable run (§13) under a JCP grant chain (jcp §4.3–§4.7): the chain is stored by address and
// named by the unit (label grant_chain, host/src/durable/cited.ts); grants_id is the run's grant
// set, in head₀ and every attestation; the leaf's scope makes the sandbox's binds and network as for
// a one-shot run (../grant.ts); each executed interval is watched live (BudgetExhausted).
//
// Debits cite what they pay for, and are made by reconciling the record with the ledger: every
// executed segment's interval (cites {attestation, energy}: the attestation and its energy
// receipt) and every resumed segment's idle energy (cites {attestation: the resumed segment's
// address, energy: the address of its idle figure}) that no receipt on the ledger cites yet is
// debited, once. Reconciling after each append, at each resume and at close means a crash between
// a segment's append and its debit loses nothing and doubles nothing: the next reconcile finds the
// segment without its debit and debits it. A debit the ledger refuses (Overspend: the unit's power
// rose past the live bound, or another writer spent meanwhile) is reported; the energy stays
// attested and the next reconcile tries it again.
import { addressOf, canonicalBytes, parseCanonical, type Digest, type Envelope } from "@sbx/wire";
import { verifyAttestation } from "@sbx/sandbox-attest/attestation";
import { SandboxAttestError, type ResumedSegment } from "@sbx/sandbox-attest/runrecord";
import { readRun } from "@sbx/sandbox-attest/store";
import type { SpendRequest } from "@sbx/jcp-grant/grant";
import { GRANT_CHAIN_LABEL } from "./cited.ts";
import type { RunStore } from "../stores/index.ts";
import { refuseBelowPeriod, type GrantLedger, type GrantRun } from "../grants/index.ts";
import type { Governance } from "./supervisor.ts";

/**
 * storeChain stores the chain's envelopes (or a grant set: the list of its chains, as a set file
 * holds them) and returns the unit label that names them.
 */
export async function storeChain(
  store: RunStore,
  envs: readonly Envelope[] | readonly (readonly Envelope[])[],
): Promise<Record<string, string>> {
  return { [GRANT_CHAIN_LABEL]: await store.putObject(canonicalBytes(envs)) };
}

/** idleCites: what a debit of a resumed segment's idle energy cites. */
export function idleCites(seg: ResumedSegment): { attestation: Digest; energy: Digest } {
  const { idle_uj, idle_provenance, idle_source, idle_basis } = seg;
  const figure = { idle_uj, idle_provenance, idle_source, ...(idle_basis ? { idle_basis } : {}) };
  return { attestation: addressOf(seg), energy: addressOf(figure) };
}

// What the receipts on the ledger paid for each attestation they cite (µJ). Under a grant set one
// interval is paid by several receipts, one per chain that took a share, all citing it.
function paidOn(receipts: readonly Envelope[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const r of receipts) {
    const p = parseCanonical(Buffer.from(r.payload, "base64")) as {
      uj?: string;
      cites?: { attestation?: string };
    };
    const a = p.cites?.attestation;
    if (a !== undefined) out.set(a, (out.get(a) ?? 0n) + BigInt(p.uj ?? "0"));
  }
  return out;
}

/**
 * The spends the record owes the ledger, in record order: each segment no receipt cites yet, and
 * the rest of one whose receipts paid less than its energy (a crash between the shares of a grant
 * set's chains, or a last share the ledger refused): only that rest is owed.
 */
async function owed(
  store: RunStore,
  id: Digest,
  paid: Map<string, bigint>,
  shared: boolean,
): Promise<SpendRequest[]> {
  const out: SpendRequest[] = [];
  // Under one chain a segment is paid by one receipt, whole: any receipt citing it settles it.
  const rest = (a: string, uj: string): bigint | null => {
    const p = paid.get(a);
    if (p === undefined) return BigInt(uj);
    return shared && p < BigInt(uj) ? BigInt(uj) - p : null;
  };
  for (const seg of (await readRun(store, id)).segments)
    if (seg.kind === "executed" && (shared || !paid.has(seg.attestation))) {
      const env = await store.getSigned(seg.attestation);
      if (env === null) throw new SandboxAttestError("ObjectMissing", `attestation ${seg.attestation}`);
      const p = verifyAttestation(env).predicate;
      const uj = rest(seg.attestation, p.energy.total_uj);
      if (uj === null) continue;
      const wall_ms = p.interval.end_ms - p.interval.start_ms;
      out.push({
        uj: uj.toString(),
        wall_ms,
        cites: { attestation: seg.attestation, energy: p.energy.receipt },
      });
    } else if (seg.kind === "resumed" && BigInt(seg.idle_uj) > 0n) {
      const cites = idleCites(seg);
      const uj = rest(cites.attestation, seg.idle_uj);
      if (uj !== null) out.push({ uj: uj.toString(), calls: 0, wall_ms: 0, cites });
    }
  return out;
}

/** The spends reconcile made and the ones the ledger refused. */
export interface Reconciled {
  readonly debited: number;
  readonly refused: readonly string[];
}

/**
 * reconcile debits, once each, the run's segments that the ledger does not yet cite (the file
 * comment). Refusals by the ledger are returned (their codes), not thrown; a record or ledger
 * that does not verify throws.
 */
export async function reconcile(store: RunStore, id: Digest, ledger: GrantLedger): Promise<Reconciled> {
  const refused: string[] = [];
  let debited = 0;
  for (const req of await owed(store, id, paidOn(ledger.receipts()), ledger.set.length > 1))
    try {
      ledger.spend(req);
      debited++;
    } catch (e) {
      refused.push(`${(e as { code?: string }).code ?? "Error"} on ${req.cites?.attestation ?? ""}`);
    }
  return { debited, refused };
}

/**
 * mayResume (jcp §4.5, §4.7) refuses a resume that the grant in force no longer allows: the chain
 * revoked (`Revoked`) or expired, the amended leaf's expiry included (`Expired`), or nothing left of
 * the budget along it, an amendment below what is spent included (`BudgetExhausted`).
 */
export function mayResume(ledger: GrantLedger): void {
  ledger.verifyNow();
  refuseBelowPeriod(ledger.remaining(), ledger.path);
}

/** governanceOf: the supervisor's hooks for run `id` under `grant` (the file comment). */
export function governanceOf(
  store: RunStore,
  id: Digest,
  grant: GrantRun,
  say: (l: string) => void,
): Governance {
  const settle = async (): Promise<void> => {
    const r = await reconcile(store, id, grant.ledger);
    if (r.debited > 0)
      say(
        `debited ${String(r.debited)} on ${grant.ledger.path}; ${String(grant.ledger.remaining())} µJ remain`,
      );
    for (const x of r.refused) say(`debit refused: ${x}`);
  };
  return {
    live: grant.watch,
    recorded: settle,
    mayResume: () => {
      mayResume(grant.ledger);
      return Promise.resolve();
    },
    resumed: settle,
    suspended: settle,
  };
}
