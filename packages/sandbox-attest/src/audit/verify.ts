// §7.7 Verifying an audit chain: every attestation verifies, and the sequence links from the
// starting head with no attestation dropped, reordered, inserted, spliced or forked.
import type { Digest, Envelope } from "@sbx/wire";
import { SandboxAttestError, type SandboxAttestErrorCode } from "../errors.ts";
import { verifyAttestation } from "../attestation/verify.ts";
import { auditGenesis, type AuditLink } from "./chain.ts";

/** Where verification starts and whom the domain trusts (§7.7). */
export interface AuditOptions {
  /** The domain id (stewardDomain). */
  readonly domain: Digest;
  /** The domain's host keys; an attestation signed by anyone else is `AuditSplice`. */
  readonly hosts?: readonly string[];
  /** A head already verified (address and position) to continue from; default the genesis. */
  readonly from?: { readonly head: Digest; readonly seq: number };
}

/** The chain's state after the sequence: its head, its last position, and how many were checked. */
export interface AuditResult {
  readonly head: Digest;
  readonly seq: number;
  readonly count: number;
}

interface Item extends AuditLink {
  readonly address: Digest;
}

/**
 * verifyAuditChain verifies a domain's attestations in order (§7.7). Each is verified as an
 * attestation (§7.4 codes). Refuses, with the first that applies: an attestation with no link
 * (`AuditUnlinked`), one signed outside `hosts` (`AuditSplice`), the same attestation twice
 * (`AuditInsert`), two citing one predecessor (`AuditFork`); then, walking from the start head, at the
 * first attestation that does not continue it: one citing a later one (`AuditReorder`), one whose
 * successor continues the head instead (`AuditInsert`), one at the right position citing another
 * chain (`AuditSplice`), one whose due predecessor comes later (`AuditReorder`), one past a missing
 * position (`AuditGap`), and any other (`AuditInsert`).
 */
export function verifyAuditChain(envs: readonly Envelope[], opts: AuditOptions): AuditResult {
  const items = envs.map((e, i) => openItem(e, i, opts.hosts));
  checkDistinct(items);
  let exp = opts.from
    ? { audit_prev: opts.from.head, audit_seq: opts.from.seq + 1 }
    : { audit_prev: auditGenesis(opts.domain), audit_seq: 1 };
  for (let k = 0; k < items.length; k++) {
    const it = items[k]!;
    if (!continues(it, exp))
      fail(
        classify(items, k, exp),
        `attestation ${k} (seq ${it.audit_seq}) does not continue head ${exp.audit_prev} at seq ${exp.audit_seq}`,
      );
    exp = { audit_prev: it.address, audit_seq: it.audit_seq + 1 };
  }
  return { head: exp.audit_prev, seq: exp.audit_seq - 1, count: items.length };
}

function fail(code: SandboxAttestErrorCode, msg: string): never {
  throw new SandboxAttestError(code, msg);
}

function openItem(env: Envelope, i: number, hosts: readonly string[] | undefined): Item {
  const v = verifyAttestation(env);
  const p = v.predicate;
  if (p.audit_prev === undefined || p.audit_seq === undefined)
    return fail("AuditUnlinked", `attestation ${i} carries no audit link`);
  if (hosts && !hosts.includes(p.host))
    fail("AuditSplice", `attestation ${i} is signed by ${p.host}, outside the domain`);
  return { address: v.address, audit_prev: p.audit_prev, audit_seq: p.audit_seq };
}

function checkDistinct(items: readonly Item[]): void {
  const seen = new Set<string>();
  const prevs = new Set<string>();
  for (const [i, it] of items.entries()) {
    if (seen.has(it.address)) fail("AuditInsert", `attestation ${i} appears twice`);
    if (prevs.has(it.audit_prev))
      fail("AuditFork", `attestation ${i} cites ${it.audit_prev}, already cited by another`);
    seen.add(it.address);
    prevs.add(it.audit_prev);
  }
}

function continues(it: AuditLink, exp: AuditLink): boolean {
  return it.audit_prev === exp.audit_prev && it.audit_seq === exp.audit_seq;
}

function classify(items: readonly Item[], k: number, exp: AuditLink): SandboxAttestErrorCode {
  const it = items[k]!;
  const later = items.slice(k + 1);
  if (later.some((x) => x.address === it.audit_prev)) return "AuditReorder";
  const next = items[k + 1];
  if (next && continues(next, exp)) return "AuditInsert";
  if (it.audit_seq === exp.audit_seq) return "AuditSplice";
  if (later.some((x) => continues(x, exp))) return "AuditReorder";
  return it.audit_seq > exp.audit_seq ? "AuditGap" : "AuditInsert";
}
