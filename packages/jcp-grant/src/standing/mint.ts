// §4.6 Minting and ledger verification: a minted child is an ordinary attenuated child of the held
// grant that cites the policy and the event; each mint appends a minter-signed entry to the ledger.
import { addressOf, payloadOf, signPayload, type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import { JcpError } from "../errors.ts";
import { attenuate } from "../grant/issue.ts";
import { resolveGrant, type EffectiveGrant, type GrantPayload } from "../grant/grant.ts";
import { GrantCache, openGrant } from "../grant/open.ts";
import { assertInWindow, resolveChain, type ResolveOptions } from "../grant/verify.ts";
import { openEvent, type OpenedEvent } from "./event.ts";
import { MINT_PAYLOAD_TYPE, MintBook, openMintEntry, type MintEntry, type MintedChild } from "./ledger.ts";
import { openPolicy, type OpenedPolicy } from "./policy.ts";

/** What a standing grant is: its policy envelope and the chain of the held grant, root first. */
export interface StandingGrant {
  readonly policy: unknown;
  readonly held: readonly unknown[];
}

/** The result of one mint: the child grant, the signed ledger entry, and the chain to the child. */
export interface Minted {
  readonly child: Envelope;
  readonly entry: Envelope;
  readonly chain: readonly unknown[];
}

/** What verifying a ledger reports. */
export interface LedgerSummary {
  readonly policy: Digest;
  readonly head: Digest;
  readonly length: number;
  readonly total_uj: bigint;
  readonly children: readonly Digest[];
}

/**
 * openStanding opens a policy and its held grant (§4.6), in this order: the policy (openPolicy's
 * codes), the held chain (resolveChain's codes, with `roots` when given), the policy naming the
 * chain's leaf (`BadPolicy`), signed by that grant's issuer (`PolicyNotByIssuer`), and naming its
 * holder as minter (`BadPolicy`).
 */
export function openStanding(s: StandingGrant, opts: ResolveOptions = {}): MintBook {
  const policy: OpenedPolicy = openPolicy(s.policy);
  const chain = resolveChain(s.held, opts);
  const held = chain[chain.length - 1]!;
  const p = policy.payload;
  if (p.grant !== held.address)
    throw new JcpError("BadPolicy", `the policy names ${p.grant}, not ${held.address}`);
  if (p.issuer !== held.issuer)
    throw new JcpError(
      "PolicyNotByIssuer",
      `the policy is signed by ${p.issuer}, the grant's issuer is ${held.issuer}`,
    );
  if (p.minter !== held.holder) throw new JcpError("BadPolicy", "the minter is the held grant's holder");
  return new MintBook(policy, held);
}

function childOf(env: unknown, held: EffectiveGrant, cache?: GrantCache): MintedChild {
  const { payload, address } = openGrant(env, cache);
  if (payload.parent !== held.address)
    throw new JcpError("BrokenChain", `${address} is not a child of the held grant ${held.address}`);
  return { payload, grant: resolveGrant(payload, address, held) };
}

/** StandingMinter mints children under one policy, keeping the ledger (§4.6). Single writer. */
export class StandingMinter {
  readonly book: MintBook;
  readonly #held: readonly unknown[];
  readonly #minter: KeyPair;
  readonly #opts: ResolveOptions;
  readonly #entries: Envelope[] = [];

  /** Opens the standing grant (openStanding's codes) and refuses a key that is not the minter (`NotHolder`). */
  constructor(s: StandingGrant, minter: KeyPair, opts: ResolveOptions = {}) {
    this.book = openStanding(s, opts);
    if (minter.did !== this.book.policy.payload.minter)
      throw new JcpError("NotHolder", `${minter.did} is not the policy's minter`);
    this.#held = s.held;
    this.#minter = minter;
    this.#opts = opts;
  }

  /**
   * mint mints one child for `event` at `at_ms` (§4.6): the held chain in its window at `at_ms`
   * (`NotYetValid`, `Expired`), the event (openEvent's codes), then every check of MintBook.check
   * (`EventReplayed`, `TriggerMismatch`, `MintCapExceeded`, `MintBudgetExceeded`, `RateExceeded`, …)
   * before anything is signed. The child takes the template's scope and budget, starts at `at_ms`
   * and lives `lifetime_ms`, cut to the held grant's expiry.
   */
  mint(event: unknown, at_ms: number, nonce?: string): Minted {
    assertInWindow([this.book.held], at_ms);
    const ev: OpenedEvent = openEvent(event);
    const t = this.book.policy.payload.template;
    const child = attenuate(
      this.#held,
      this.#minter,
      {
        holder: t.holder,
        resources: t.resources,
        actions: t.actions,
        uj: t.uj,
        ...(t.calls !== undefined ? { calls: t.calls } : {}),
        nbf_ms: at_ms,
        exp_ms: Math.min(at_ms + t.lifetime_ms, this.book.held.exp_ms),
        depth: t.depth,
        mint: { policy: this.book.policy.address, event: ev.address },
        ...(nonce ? { nonce } : {}),
      },
      this.#opts,
    );
    const payload = payloadOf(child) as unknown as GrantPayload;
    const minted = { payload, grant: resolveGrant(payload, addressOf(payload), this.book.held) };
    const entry: MintEntry = {
      policy: this.book.policy.address,
      ...this.book.next(),
      event: ev.address,
      child: minted.grant.address,
      uj: t.uj,
      at_ms,
      minter: this.#minter.did,
    };
    this.book.check(entry, ev, minted);
    const env = signPayload(MINT_PAYLOAD_TYPE, entry, this.#minter);
    this.book.append(entry);
    this.#entries.push(env);
    return { child, entry: env, chain: [...this.#held, child] };
  }

  /**
   * resume opens a minter on an existing ledger (§4.6): every entry is verified as by
   * verifyMintLedger (its codes) and taken into the book, so the next mint follows the last entry.
   */
  static resume(
    s: StandingGrant,
    minter: KeyPair,
    l: LedgerFiles,
    opts: ResolveOptions = {},
  ): StandingMinter {
    const m = new StandingMinter(s, minter, opts);
    const events = indexBy(l.events, openEvent, (e) => e.address);
    const cache = new GrantCache(l.children.length + 1);
    const children = indexBy(
      l.children,
      (c) => openGrant(c, cache),
      (c) => c.address,
    );
    for (const env of l.entries) {
      admit(m.book, env, events, children, cache);
      m.#entries.push(env as Envelope);
    }
    return m;
  }

  /** Every entry this minter signed, in order. */
  get entries(): readonly Envelope[] {
    return this.#entries;
  }
}

/** A ledger as stored: entries in order, and the events and children they cite. */
export interface LedgerFiles {
  readonly entries: readonly unknown[];
  readonly events: readonly unknown[];
  readonly children: readonly unknown[];
}

/** What verifyMintLedger needs: the standing grant, the ledger, and the trusted roots. */
export interface LedgerInput extends StandingGrant, LedgerFiles {
  readonly roots?: readonly string[];
}

// Verifies one entry against the book (verifyMintLedger's order) and appends it; returns its child.
function admit(
  book: MintBook,
  env: unknown,
  events: Map<Digest, unknown>,
  children: Map<Digest, unknown>,
  cache: GrantCache,
): Digest {
  const e = openMintEntry(env);
  const ev = events.get(e.event);
  const ch = children.get(e.child);
  if (ev === undefined || ch === undefined)
    throw new JcpError("BadMintEntry", `entry ${e.seq} cites an event or child not given`);
  assertInWindow([book.held], e.at_ms);
  book.check(e, openEvent(ev), childOf(ch, book.held, cache));
  book.append(e);
  return e.child;
}

function indexBy<T>(
  xs: readonly unknown[],
  open: (x: unknown) => T,
  addr: (t: T) => Digest,
): Map<Digest, unknown> {
  const m = new Map<Digest, unknown>();
  for (const x of xs) m.set(addr(open(x)), x);
  return m;
}

/**
 * verifyMintLedger checks a whole ledger (§4.6): openStanding's codes, then each entry in order:
 * openMintEntry's codes, the event and child it cites present (`BadMintEntry`), the held grant in
 * its window at the entry's time (`NotYetValid`, `Expired`), the child opened (openGrant's codes)
 * and a child of the held grant (`BrokenChain`), then MintBook.check. Events and children are
 * opened when indexed (openEvent's, openGrant's codes). Returns head, length, total and children.
 */
export function verifyMintLedger(input: LedgerInput): LedgerSummary {
  const book = openStanding(input, input.roots ? { roots: input.roots } : {});
  const events = indexBy(input.events, openEvent, (e) => e.address);
  const cache = new GrantCache(input.children.length + 1);
  const children = indexBy(
    input.children,
    (c) => openGrant(c, cache),
    (c) => c.address,
  );
  const out: Digest[] = [];
  for (const env of input.entries) out.push(admit(book, env, events, children, cache));
  return {
    policy: book.policy.address,
    head: book.head,
    length: book.length,
    total_uj: book.total,
    children: out,
  };
}

/** eventAddress returns the content address of an event, bare or signed (openEvent's codes). */
export function eventAddress(event: unknown): Digest {
  return openEvent(event).address;
}
