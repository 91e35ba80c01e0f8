// §4.6 The mint ledger: one signed, hash-chained entry per minted child, and the book that admits
// an entry only when every constraint of the policy still holds. Minter and verifier share it.
import {
  chainGenesis,
  chainNext,
  isAmount,
  isDidKey,
  isDigest,
  openEnvelope,
  parseAmount,
  WireError,
  type Amount,
  type Digest,
} from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { budgetWithin } from "../grant/budget.ts";
import { assertChildOf } from "../grant/contain.ts";
import type { EffectiveGrant, GrantPayload } from "../grant/grant.ts";
import { rethrow } from "../grant/open.ts";
import { scopeCovers } from "../grant/scope.ts";
import { assertTriggered, type OpenedEvent } from "./event.ts";
import { policyTotal, type OpenedPolicy } from "./policy.ts";

/** The payload type of a mint ledger entry (§4.6). */
export const MINT_PAYLOAD_TYPE = "application/vnd.jcp.mint+json";
/** The chain tag of a mint ledger: head₀ = BLAKE3("jcp.mintledger/1" ‖ policy address). */
export const MINT_LEDGER_TAG = "jcp.mintledger/1";

/** One ledger entry as the minter signs it (§4.6). */
export interface MintEntry {
  readonly policy: Digest;
  readonly seq: number;
  readonly prev: Digest;
  readonly event: Digest;
  readonly child: Digest;
  readonly uj: Amount;
  readonly at_ms: number;
  readonly minter: string;
}

const KEYS = "at_ms,child,event,minter,policy,prev,seq,uj";

function checkEntry(v: Record<string, unknown>): MintEntry {
  if (Object.keys(v).sort().join(",") !== KEYS)
    throw new JcpError("BadMintEntry", `an entry has exactly the members ${KEYS}`);
  if (!isDigest(v.policy) || !isDigest(v.prev) || !isDigest(v.event) || !isDigest(v.child))
    throw new JcpError("BadMintEntry", "policy, prev, event and child are digests");
  if (!isDidKey(v.minter)) throw new JcpError("BadMintEntry", "minter is a did:key");
  if (!isAmount(v.uj)) throw new JcpError("BadMintEntry", "uj is a decimal amount");
  for (const k of ["seq", "at_ms"] as const)
    if (typeof v[k] !== "number" || !Number.isSafeInteger(v[k]) || v[k] < 0)
      throw new JcpError("BadMintEntry", `${k} is a non-negative integer`);
  return v as unknown as MintEntry;
}

/**
 * openMintEntry verifies one entry envelope (§4.6): wire codes, form (`BadMintEntry`), and one
 * signature by the `minter` it names (`BadSignature`).
 */
export function openMintEntry(env: unknown): MintEntry {
  let opened;
  try {
    opened = openEnvelope(env, { payloadType: MINT_PAYLOAD_TYPE, maxBytes: 4096 });
  } catch (e) {
    if (e instanceof WireError && e.code === "OversizeInput") throw new JcpError("BadMintEntry", e.message);
    rethrow(e);
  }
  const r = checkEntry(opened.payload);
  if (opened.signers.length !== 1 || opened.signers[0] !== r.minter)
    throw new JcpError("BadSignature", "an entry carries one signature, its minter's");
  return r;
}

/** A minted child as the book sees it: its payload and effective grant under the held grant. */
export interface MintedChild {
  readonly payload: GrantPayload;
  readonly grant: EffectiveGrant;
}

/** MintBook is the running state of one policy's ledger: head, count, total, events, recent times. */
export class MintBook {
  readonly policy: OpenedPolicy;
  readonly held: EffectiveGrant;
  #head: Digest;
  #seq = 0;
  #last_ms = 0;
  #total = 0n;
  readonly #events = new Set<Digest>();
  readonly #times: number[] = [];

  constructor(policy: OpenedPolicy, held: EffectiveGrant) {
    this.policy = policy;
    this.held = held;
    this.#head = chainGenesis(MINT_LEDGER_TAG, [policy.address]);
  }

  get head(): Digest {
    return this.#head;
  }
  get length(): number {
    return this.#seq;
  }
  get total(): bigint {
    return this.#total;
  }
  /** Whether an event has already minted a child. */
  hasEvent(address: Digest): boolean {
    return this.#events.has(address);
  }

  /** The next entry's seq and prev. */
  next(): { seq: number; prev: Digest } {
    return { seq: this.#seq + 1, prev: this.#head };
  }

  /**
   * check refuses an entry the policy does not admit (§4.6), in this order: policy, seq, prev or a
   * time before the last entry (`BrokenMintLedger`); minter other than the policy's (`BadMintEntry`);
   * time outside the policy's window (`NotYetValid`, `Expired`); the event not the one cited or
   * dated after the mint (`BadMintEntry`), already used (`EventReplayed`), admitted by no trigger
   * (`TriggerMismatch`); the child not citing policy and event or not the entry's child
   * (`BadMintEntry`), not a valid child of the held grant (assertChildOf's codes), outside the
   * template (`TemplateExceeded`), its uj not the entry's (`BadMintEntry`); then the count cap
   * (`MintCapExceeded`), the total budget cap (`MintBudgetExceeded`) and the rate (`RateExceeded`).
   */
  check(e: MintEntry, ev: OpenedEvent, child: MintedChild): void {
    const p = this.policy.payload;
    if (
      e.policy !== this.policy.address ||
      e.seq !== this.#seq + 1 ||
      e.prev !== this.#head ||
      e.at_ms < this.#last_ms
    )
      throw new JcpError(
        "BrokenMintLedger",
        `entry ${e.seq} does not follow seq ${this.#seq}, head ${this.#head}`,
      );
    if (e.minter !== p.minter) throw new JcpError("BadMintEntry", `${e.minter} is not the policy's minter`);
    if (e.at_ms < p.nbf_ms) throw new JcpError("NotYetValid", `the policy is valid from ${p.nbf_ms}`);
    if (e.at_ms >= p.exp_ms) throw new JcpError("Expired", `the policy expired at ${p.exp_ms}`);
    if (ev.address !== e.event || ev.payload.at_ms > e.at_ms)
      throw new JcpError("BadMintEntry", `entry ${e.seq} cites ${e.event}, not this event or a later one`);
    if (this.#events.has(ev.address)) throw new JcpError("EventReplayed", `${ev.address} has already minted`);
    assertTriggered(p, ev);
    this.#checkChild(e, child);
    this.#checkCaps(e);
  }

  #checkChild(e: MintEntry, c: MintedChild): void {
    const m = c.payload.mint;
    if (!m || m.policy !== e.policy || m.event !== e.event || c.grant.address !== e.child)
      throw new JcpError("BadMintEntry", `child ${c.grant.address} does not cite this policy and event`);
    assertChildOf(c.grant, this.held);
    const t = this.policy.payload.template;
    const g = c.grant;
    const inside =
      g.holder === t.holder &&
      scopeCovers({ resources: t.resources, actions: t.actions }, g.scope) &&
      budgetWithin(g.budget, { uj: parseAmount(t.uj), calls: t.calls ?? null, wall_ms: null }) &&
      g.depth <= t.depth &&
      g.nbf_ms === e.at_ms &&
      g.exp_ms - g.nbf_ms <= t.lifetime_ms;
    if (!inside)
      throw new JcpError("TemplateExceeded", `child ${g.address} lies outside the policy's template`);
    if (parseAmount(e.uj) !== g.budget.uj)
      throw new JcpError("BadMintEntry", `entry ${e.seq} states uj ${e.uj}, the child ${g.budget.uj}`);
  }

  #checkCaps(e: MintEntry): void {
    const p = this.policy.payload;
    if (this.#seq + 1 > p.max_children)
      throw new JcpError("MintCapExceeded", `child ${this.#seq + 1} exceeds the cap of ${p.max_children}`);
    if (this.#total + parseAmount(e.uj) > policyTotal(p))
      throw new JcpError("MintBudgetExceeded", `children's budgets would exceed ${p.max_total_uj} uj`);
    const from = e.at_ms - p.rate.window_ms;
    const inWindow = this.#times.filter((t) => t > from).length + 1;
    if (inWindow > p.rate.count)
      throw new JcpError(
        "RateExceeded",
        `${inWindow} mints in (${from}, ${e.at_ms}] exceed ${p.rate.count} per ${p.rate.window_ms} ms`,
      );
  }

  /** append records an entry already checked. */
  append(e: MintEntry): void {
    this.#head = chainNext(this.#head, e);
    this.#seq = e.seq;
    this.#last_ms = e.at_ms;
    this.#total += parseAmount(e.uj);
    this.#events.add(e.event);
    const from = e.at_ms - this.policy.payload.rate.window_ms;
    while (this.#times.length && this.#times[0]! <= from) this.#times.shift();
    this.#times.push(e.at_ms);
  }
}
