// §4.3 Spend: a metering host signs a receipt for what a unit consumed under a leaf grant. Receipts
// are hash-chained per leaf (head₀ = BLAKE3("jcp.spend/1" ‖ leaf address)) and debit every grant on
// the leaf's chain; a spend that would take any of them past its budget is refused. A verifier
// replays the receipts against the grants and recomputes every remaining budget.
import {
  chainGenesis,
  chainNext,
  isAmount,
  isDidKey,
  isDigest,
  parseAmount,
  signPayload,
  formatAmount,
  type Amount,
  type Digest,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { addUsage, remainingOf, usageWithin, ZERO_USAGE, type Remaining, type Usage } from "./budget.ts";
import type { EffectiveGrant } from "./grant.ts";
import { SPEND_PAYLOAD_TYPE } from "./limits.ts";
import { openSigned, type GrantCache } from "./open.ts";
import type { RevocationIndex } from "./revoke.ts";
import { chainFromStore, type GrantStore } from "./store.ts";
import { verifyChain, type EffectiveHook } from "./verify.ts";

/** The chain tag of a leaf's spend receipts. */
export const SPEND_TAG = "jcp.spend/1";

/** One spend receipt as the metering host signs it (§4.3). */
export interface SpendPayload {
  readonly grant: Digest;
  readonly seq: number;
  readonly prev: Digest;
  readonly uj: Amount;
  readonly calls: number;
  readonly wall_ms: number;
  readonly at_ms: number;
  readonly host: string;
  /** What the spend paid for, when a host metered it (sandbox-attest §6, §7): addresses. */
  readonly cites?: SpendCites;
  /**
   * Energy used beyond the budget (µJ, > 0): present only on a receipt that debits exactly what was
   * left along its chain, so the work is charged in full up to the budget and the rest is on record.
   */
  readonly overshoot_uj?: Amount;
}

/** A metered interval a receipt pays for: its attestation's and its energy receipt's addresses. */
export interface SpendCites {
  readonly attestation: Digest;
  readonly energy: Digest;
}

/** What a ledger needs to verify chains and receipts. */
export interface LedgerOptions {
  /** Trusted root issuers (did:key). */
  readonly roots: readonly string[];
  /** Trusted metering hosts (did:key): only their receipts count. */
  readonly hosts: readonly string[];
  readonly revocations?: RevocationIndex;
  readonly effective?: EffectiveHook;
  readonly cache?: GrantCache;
}

/** One spend: microjoules, and the calls (default 1) and wall milliseconds (default 0) it used. */
export interface SpendRequest {
  readonly uj: Amount;
  readonly calls?: number;
  readonly wall_ms?: number;
  readonly cites?: SpendCites;
  /**
   * Debit at most what is left (§4.3 "Overshoot"): when `uj` is above the smallest remaining budget
   * along the chain, the receipt debits that remainder and records the rest as `overshoot_uj`,
   * instead of the spend being refused (`Overspend`). For energy already used, which must be paid.
   */
  readonly cap?: boolean;
}

const KEYS = "at_ms,calls,grant,host,prev,seq,uj,wall_ms";
const OPTIONAL = new Set(["cites", "overshoot_uj"]);

function checkCites(c: unknown): void {
  const o = c as Record<string, unknown> | null;
  if (
    typeof o !== "object" ||
    o === null ||
    Array.isArray(o) ||
    Object.keys(o).sort().join(",") !== "attestation,energy"
  )
    throw new JcpError("BadReceipt", "cites is {attestation, energy}");
  if (!isDigest(o.attestation) || !isDigest(o.energy))
    throw new JcpError("BadReceipt", "cites.attestation and cites.energy must be digests");
}

function checkReceipt(v: Record<string, unknown>): SpendPayload {
  const keys = Object.keys(v)
    .filter((k) => !OPTIONAL.has(k))
    .sort()
    .join(",");
  if (keys !== KEYS)
    throw new JcpError(
      "BadReceipt",
      `a receipt has exactly the members ${KEYS}, and optionally cites and overshoot_uj`,
    );
  if ("cites" in v) checkCites(v.cites);
  if ("overshoot_uj" in v && (!isAmount(v.overshoot_uj) || parseAmount(v.overshoot_uj) === 0n))
    throw new JcpError("BadReceipt", "overshoot_uj must be a decimal amount above 0");
  if (!isDigest(v.grant) || !isDigest(v.prev))
    throw new JcpError("BadReceipt", "grant and prev must be digests");
  if (!isDidKey(v.host)) throw new JcpError("BadReceipt", "host must be an Ed25519 did:key");
  if (!isAmount(v.uj)) throw new JcpError("BadReceipt", "uj must be a decimal amount");
  for (const k of ["seq", "calls", "wall_ms", "at_ms"] as const)
    if (typeof v[k] !== "number" || !Number.isSafeInteger(v[k]) || v[k] < 0)
      throw new JcpError("BadReceipt", `${k} must be a non-negative integer`);
  return v as unknown as SpendPayload;
}

/**
 * openReceipt verifies one receipt envelope (§4.3): signature (`BadSignature` and wire codes),
 * form (`BadReceipt`), signed once by the host it names (`BadSignature`), a trusted host (`UntrustedHost`).
 */
export function openReceipt(env: unknown, hosts: readonly string[]): SpendPayload {
  const opened = openSigned(env, SPEND_PAYLOAD_TYPE, 4096, "BadReceipt");
  const r = checkReceipt(opened.payload);
  if (opened.signers.length !== 1 || opened.signers[0] !== r.host)
    throw new JcpError("BadSignature", "a receipt carries one signature, its host's");
  if (!hosts.includes(r.host))
    throw new JcpError("UntrustedHost", `${r.host} is not a trusted metering host`);
  return r;
}

interface LeafChain {
  head: Digest;
  seq: number;
  last_ms: number;
}

/** SpendLedger holds receipts and the usage of every grant they debit (§4.3). Single writer; extend resumes it. */
export class SpendLedger {
  readonly #opts: LedgerOptions;
  readonly #used = new Map<Digest, Usage>();
  readonly #grants = new Map<Digest, EffectiveGrant>();
  readonly #leaves = new Map<Digest, LeafChain>();
  readonly #receipts: Envelope[] = [];
  readonly #over = new Map<Digest, bigint>();

  constructor(opts: LedgerOptions) {
    this.#opts = opts;
  }

  /**
   * replay rebuilds a ledger from receipts in the order they were appended (§4.3), verifying each
   * as extend does.
   */
  static replay(store: GrantStore, receipts: readonly unknown[], opts: LedgerOptions): SpendLedger {
    const ledger = new SpendLedger(opts);
    ledger.extend(store, receipts);
    return ledger;
  }

  /**
   * extend verifies and applies receipts appended after the ones this ledger holds (§4.3), so a
   * writer resumes from its last verified state instead of replaying the whole ledger. Each is
   * checked: openReceipt's codes; `seq`, `prev` and non-decreasing `at_ms` along its leaf's chain
   * (`BrokenReceiptChain`); its grant chain, found in `store`, valid at the receipt's `at_ms`
   * (chainFromStore's and verifyChain's codes); a receipt with `overshoot_uj` debiting anything but
   * the remainder along its chain (`BadOvershoot`); and no grant on it over budget (`Overspend`). On
   * a refusal the receipts before the refused one stay applied.
   */
  extend(store: GrantStore, receipts: readonly unknown[]): void {
    for (const env of receipts) {
      const r = openReceipt(env, this.#opts.hosts);
      const leaf = this.#leaf(r.grant);
      if (r.seq !== leaf.seq + 1 || r.prev !== leaf.head || r.at_ms < leaf.last_ms)
        throw new JcpError(
          "BrokenReceiptChain",
          `receipt ${r.seq} of ${r.grant} does not follow seq ${leaf.seq}, head ${leaf.head}`,
        );
      const grants = this.#verify(chainFromStore(r.grant, store, this.#opts.cache), r.at_ms);
      const uj = parseAmount(r.uj);
      if (r.overshoot_uj !== undefined && uj !== this.#remainder(grants))
        throw new JcpError(
          "BadOvershoot",
          `receipt ${r.seq} of ${r.grant} records an overshoot but debits ${uj}, not the ${this.#remainder(grants)} µJ left`,
        );
      this.#debit(grants, { uj, calls: r.calls, wall_ms: r.wall_ms });
      this.#overshoot(grants, r.overshoot_uj);
      this.#append(env as Envelope, r);
    }
  }

  #leaf(address: Digest): LeafChain {
    return this.#leaves.get(address) ?? { head: chainGenesis(SPEND_TAG, [address]), seq: 0, last_ms: 0 };
  }

  #verify(chain: readonly unknown[], at_ms: number): readonly EffectiveGrant[] {
    const { roots, revocations, effective, cache } = this.#opts;
    const { grants } = verifyChain(chain, {
      roots,
      at_ms,
      ...(revocations ? { revocations } : {}),
      ...(effective ? { effective } : {}),
      ...(cache ? { cache } : {}),
    });
    return grants;
  }

  // The remainder along a chain: the smallest remaining µJ of any grant on it, never below zero.
  #remainder(grants: readonly EffectiveGrant[]): bigint {
    let least: bigint | null = null;
    for (const g of grants) {
      const left = g.budget.uj - this.used(g.address).uj;
      if (least === null || left < least) least = left;
    }
    return least !== null && least > 0n ? least : 0n;
  }

  // Records a receipt's overshoot against every grant on its chain, as its debit is.
  #overshoot(grants: readonly EffectiveGrant[], amount: Amount | undefined): void {
    if (amount === undefined) return;
    for (const g of grants)
      this.#over.set(g.address, (this.#over.get(g.address) ?? 0n) + parseAmount(amount));
  }

  // The totals after debiting every grant on the chain; Overspend if any would pass its budget.
  #totals(grants: readonly EffectiveGrant[], u: Usage): Usage[] {
    const totals = grants.map((g) => addUsage(this.#used.get(g.address) ?? ZERO_USAGE, u));
    grants.forEach((g, i) => {
      if (!usageWithin(totals[i]!, g.budget))
        throw new JcpError("Overspend", `spend would take ${g.address} past its budget`);
    });
    return totals;
  }

  // Debits every grant on the chain, or none: each total is checked before any is written.
  #debit(grants: readonly EffectiveGrant[], u: Usage): void {
    const totals = this.#totals(grants, u);
    grants.forEach((g, i) => {
      this.#used.set(g.address, totals[i]!);
      this.#grants.set(g.address, g);
    });
  }

  #append(env: Envelope, r: SpendPayload): void {
    this.#leaves.set(r.grant, { head: chainNext(this.#leaf(r.grant).head, r), seq: r.seq, last_ms: r.at_ms });
    this.#receipts.push(env);
  }

  /**
   * spend verifies `chain` (root first) at `at_ms` (verifyChain's codes), refuses an untrusted
   * `host` (`UntrustedHost`), a time before the leaf's last receipt (`BrokenReceiptChain`) and a
   * spend that takes any grant on the chain past its budget (`Overspend`; with `req.cap`, the µJ
   * beyond the remainder are recorded as `overshoot_uj` instead); otherwise debits every grant on
   * the chain and returns the host-signed receipt, chained after the leaf's last one.
   */
  spend(chain: readonly unknown[], host: KeyPair, req: SpendRequest, at_ms: number): Envelope {
    const { env, payload, grants, usage } = this.#draft(chain, host, req, at_ms);
    this.#debit(grants, usage);
    this.#overshoot(grants, payload.overshoot_uj);
    this.#append(env, payload);
    return env;
  }

  /**
   * draft checks and signs the receipt spend would append, refusing as spend does, but leaves the
   * ledger as it is: a writer that must first claim the log's head applies the receipt with extend
   * only once its append won (§4.3).
   */
  draft(chain: readonly unknown[], host: KeyPair, req: SpendRequest, at_ms: number): Envelope {
    return this.#draft(chain, host, req, at_ms).env;
  }

  #draft(chain: readonly unknown[], host: KeyPair, req: SpendRequest, at_ms: number) {
    if (!this.#opts.hosts.includes(host.did))
      throw new JcpError("UntrustedHost", `${host.did} is not a trusted metering host`);
    const asked = parseAmount(req.uj);
    const grants = this.#verify(chain, at_ms);
    const left = this.#remainder(grants);
    const over = req.cap === true && asked > left ? asked - left : 0n;
    const usage: Usage = { uj: asked - over, calls: req.calls ?? 1, wall_ms: req.wall_ms ?? 0 };
    const leafAddr = grants[grants.length - 1]!.address;
    const leaf = this.#leaf(leafAddr);
    if (at_ms < leaf.last_ms)
      throw new JcpError("BrokenReceiptChain", `time ${at_ms} is before the last receipt's ${leaf.last_ms}`);
    const payload: SpendPayload = {
      grant: leafAddr,
      seq: leaf.seq + 1,
      prev: leaf.head,
      uj: formatAmount(usage.uj),
      calls: usage.calls,
      wall_ms: usage.wall_ms,
      at_ms,
      host: host.did,
      ...(req.cites ? { cites: { attestation: req.cites.attestation, energy: req.cites.energy } } : {}),
      ...(over > 0n ? { overshoot_uj: formatAmount(over) } : {}),
    };
    checkReceipt(payload as unknown as Record<string, unknown>);
    this.#totals(grants, usage);
    return { env: signPayload(SPEND_PAYLOAD_TYPE, payload, host), payload, grants, usage };
  }

  /** What has been spent under the grant at `address` (its own receipts and its descendants'). */
  used(address: Digest): Usage {
    return this.#used.get(address) ?? ZERO_USAGE;
  }

  /** The energy recorded beyond the budget under the grant at `address` (its receipts' and its descendants'). */
  overshootOf(address: Digest): bigint {
    return this.#over.get(address) ?? 0n;
  }

  /** The remaining budget of every grant any receipt debited, by address. */
  remaining(): Map<Digest, Remaining> {
    const out = new Map<Digest, Remaining>();
    for (const [a, g] of this.#grants) out.set(a, remainingOf(g.budget, this.used(a)));
    return out;
  }

  /** remainingOf returns one grant's remaining budget given its effective grant. */
  remainingOf(g: EffectiveGrant): Remaining {
    return remainingOf(g.budget, this.used(g.address));
  }

  /** The head of a leaf's receipt chain (head₀ when it has none). */
  headOf(leaf: Digest): Digest {
    return this.#leaf(leaf).head;
  }

  /** How many receipts the ledger holds. */
  get count(): number {
    return this.#receipts.length;
  }

  /** Every receipt, in the order appended. */
  get receipts(): readonly Envelope[] {
    return this.#receipts;
  }
}
