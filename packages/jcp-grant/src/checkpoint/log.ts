// §4.7 The checkpoint log of one grant: holder checkpoints and issuer amendments in one hash chain.
// The grant in force is the original with every amendment so far applied in order; it only tightens.
import {
  chainGenesis,
  chainNext,
  formatAmount,
  parseAmount,
  signPayload,
  type Digest,
  type Envelope,
  type KeyPair,
} from "@sbx/wire";
import { JcpError } from "../errors.ts";
import type { Usage } from "../grant/budget.ts";
import { assertNarrows } from "../grant/contain.ts";
import type { EffectiveGrant } from "../grant/grant.ts";
import { resolveChain, type EffectiveHook, type ResolveOptions } from "../grant/verify.ts";
import {
  AMENDMENT_PAYLOAD_TYPE,
  CHECKPOINT_LOG_TAG,
  CHECKPOINT_PAYLOAD_TYPE,
  openLogEntry,
  type AmendmentPayload,
  type AmendmentSet,
  type CheckpointPayload,
  type LogEntry,
} from "./form.ts";

/**
 * applyAmendment returns `g` with the members of `set` replaced (§4.7), without checking anything.
 */
export function applyAmendment(g: EffectiveGrant, set: AmendmentSet): EffectiveGrant {
  return {
    ...g,
    scope: { resources: set.resources ?? g.scope.resources, actions: set.actions ?? g.scope.actions },
    budget: {
      uj: set.uj === undefined ? g.budget.uj : parseAmount(set.uj),
      calls: set.calls ?? g.budget.calls,
      wall_ms: set.wall_ms ?? g.budget.wall_ms,
    },
    exp_ms: set.exp_ms ?? g.exp_ms,
    depth: set.depth ?? g.depth,
  };
}

/**
 * assertTightens refuses an amended grant `next` that is not inside `cur` (§4.7): any widening in
 * depth, scope, budget or window is `AmendmentWidens`; an expiry at or before nbf_ms is `BadAmendment`;
 * a budget below `spent` in any dimension is `BudgetBelowSpent`.
 */
export function assertTightens(next: EffectiveGrant, cur: EffectiveGrant, spent: Usage): void {
  try {
    assertNarrows(next, cur, "tighten");
  } catch (e) {
    if (!(e instanceof JcpError)) throw e;
    if (e.code === "BadGrant") throw new JcpError("BadAmendment", e.message);
    throw new JcpError("AmendmentWidens", e.message, { cause: e });
  }
  const b = next.budget;
  if (
    b.uj < spent.uj ||
    (b.calls !== null && b.calls < spent.calls) ||
    (b.wall_ms !== null && b.wall_ms < spent.wall_ms)
  )
    throw new JcpError("BudgetBelowSpent", "an amended budget may not go below what is already spent");
}

/** What a holder states in a checkpoint. */
export interface CheckpointFields {
  readonly state: Digest;
  readonly spent: Usage;
  readonly at_ms: number;
}

const ZERO: Usage = { uj: 0n, calls: 0, wall_ms: 0 };

/** CheckpointLog holds one grant's log and the grant in force (§4.7). Single writer. */
export class CheckpointLog {
  /** The grant as resolved from its chain, before any amendment. */
  readonly original: EffectiveGrant;
  #effective: EffectiveGrant;
  readonly #sets: AmendmentSet[] = [];
  readonly #heads: Digest[];
  readonly #entries: Envelope[] = [];
  #last_ms = 0;
  #lastCheckpoint: CheckpointPayload | null = null;
  #lastCheckpointAddr: Digest | null = null;

  /**
   * Opens the log of the leaf of `chain` (resolveChain's codes). Refuses a grant whose issuer and
   * holder are one principal (`NotAmendable`): no one distinct from the holder could amend it.
   */
  constructor(chain: readonly unknown[], opts: ResolveOptions = {}) {
    const grants = resolveChain(chain, opts);
    const g = grants[grants.length - 1]!;
    if (g.issuer === g.holder)
      throw new JcpError("NotAmendable", `${g.address} has one principal as issuer and holder`);
    this.original = g;
    this.#effective = g;
    this.#heads = [chainGenesis(CHECKPOINT_LOG_TAG, [g.address])];
  }

  /**
   * replay builds a log from its entries, verifying each with append; with `prefix`, the head after
   * `prefix.length` entries must be `prefix.head` (`BrokenCheckpointLog`): a log seen before may be
   * extended, never rewritten or forked.
   */
  static replay(
    chain: readonly unknown[],
    entries: readonly unknown[],
    opts: ResolveOptions & { readonly prefix?: { length: number; head: Digest } } = {},
  ): CheckpointLog {
    const log = new CheckpointLog(chain, opts);
    for (const e of entries) log.append(e);
    const p = opts.prefix;
    if (p && (p.length > log.length || log.headAt(p.length) !== p.head))
      throw new JcpError(
        "BrokenCheckpointLog",
        `the log does not extend the head seen at length ${p.length}`,
      );
    return log;
  }

  get head(): Digest {
    return this.#heads[this.#heads.length - 1]!;
  }
  get length(): number {
    return this.#heads.length - 1;
  }
  /** The head after `n` entries. */
  headAt(n: number): Digest | undefined {
    return this.#heads[n];
  }
  /** The grant in force now: the original with every amendment so far applied in order. */
  get effective(): EffectiveGrant {
    return this.#effective;
  }
  /** How many amendments the log holds. */
  get amendments(): number {
    return this.#sets.length;
  }
  /** Every entry, in order. */
  get entries(): readonly Envelope[] {
    return this.#entries;
  }

  /**
   * hook returns the effective-grant hook of §4.4 for this log: the logged grant with every
   * amendment applied, read at call time (so a ledger holding it sees later amendments).
   */
  hook(): EffectiveHook {
    const address = this.original.address;
    return (a, resolved) => (a === address ? this.#sets.reduce(applyAmendment, resolved) : resolved);
  }

  /**
   * append verifies one entry and adds it (§4.7), in this order: openLogEntry's codes; `grant`,
   * `seq`, `prev` and non-decreasing `at_ms` (`BrokenCheckpointLog`, so a gap, reorder or fork is
   * refused); the signer the principal the entry names (`BadSignature`); then for a checkpoint:
   * `by` the holder (`NotHolder`), every amendment so far acknowledged (`UnacknowledgedAmendment`;
   * more than there are is `BadCheckpoint`), spend never decreasing (`BadCheckpoint`); for an
   * amendment: `by` the issuer (`SeparationOfDuties`), `responds_to` the latest checkpoint
   * (`BadAmendment`), and the result tightening (assertTightens's codes).
   */
  append(env: unknown): void {
    const e = openLogEntry(env);
    const p = e.payload;
    if (
      p.grant !== this.original.address ||
      p.seq !== this.length + 1 ||
      p.prev !== this.head ||
      p.at_ms < this.#last_ms
    )
      throw new JcpError(
        "BrokenCheckpointLog",
        `entry ${p.seq} does not follow seq ${this.length}, head ${this.head}`,
      );
    if (e.signer !== p.by) throw new JcpError("BadSignature", "an entry is signed by the principal it names");
    if (e.kind === "checkpoint") this.#checkCheckpoint(e.payload);
    else this.#applyAmendment(e.payload);
    this.#record(env as Envelope, e);
  }

  #checkCheckpoint(c: CheckpointPayload): void {
    if (c.by !== this.original.holder) throw new JcpError("NotHolder", `${c.by} does not hold the grant`);
    if (c.amendments < this.#sets.length)
      throw new JcpError(
        "UnacknowledgedAmendment",
        `checkpoint ${c.seq} acknowledges ${c.amendments} of ${this.#sets.length} amendments`,
      );
    if (c.amendments > this.#sets.length)
      throw new JcpError("BadCheckpoint", `only ${this.#sets.length} amendments exist`);
    const was = this.#spent();
    const s = c.spent;
    if (parseAmount(s.uj) < was.uj || s.calls < was.calls || s.wall_ms < was.wall_ms)
      throw new JcpError("BadCheckpoint", "spend so far never decreases");
  }

  #applyAmendment(a: AmendmentPayload): void {
    if (a.by !== this.original.issuer)
      throw new JcpError("SeparationOfDuties", `${a.by} is not the grant's issuer and may not amend it`);
    if (this.#lastCheckpointAddr === null || a.responds_to !== this.#lastCheckpointAddr)
      throw new JcpError("BadAmendment", "an amendment responds to the latest checkpoint");
    const next = applyAmendment(this.#effective, a.set);
    assertTightens(next, this.#effective, this.#spent());
    this.#effective = next;
    this.#sets.push(a.set);
  }

  #spent(): Usage {
    const s = this.#lastCheckpoint?.spent;
    return s ? { uj: parseAmount(s.uj), calls: s.calls, wall_ms: s.wall_ms } : ZERO;
  }

  #record(env: Envelope, e: LogEntry): void {
    this.#heads.push(chainNext(this.head, e.payload));
    this.#entries.push(env);
    this.#last_ms = e.payload.at_ms;
    if (e.kind === "checkpoint") {
      this.#lastCheckpoint = e.payload;
      this.#lastCheckpointAddr = e.address;
    }
  }

  /** checkpoint signs and appends the holder's checkpoint (append's codes; `NotHolder` for another key). */
  checkpoint(holder: KeyPair, f: CheckpointFields): Envelope {
    const payload: CheckpointPayload = {
      grant: this.original.address,
      seq: this.length + 1,
      prev: this.head,
      state: f.state,
      spent: { uj: formatAmount(f.spent.uj), calls: f.spent.calls, wall_ms: f.spent.wall_ms },
      amendments: this.#sets.length,
      at_ms: f.at_ms,
      by: holder.did,
    };
    const env = signPayload(CHECKPOINT_PAYLOAD_TYPE, payload, holder);
    this.append(env);
    return env;
  }

  /**
   * amend signs and appends the issuer's amendment responding to the latest checkpoint (append's
   * codes: `SeparationOfDuties` for any key but the issuer's, `AmendmentWidens`, `BudgetBelowSpent`).
   * With `spent` (e.g. from the spend ledger), also refuses a budget below it (`BudgetBelowSpent`).
   */
  amend(issuer: KeyPair, set: AmendmentSet, at_ms: number, spent?: Usage): Envelope {
    if (spent) assertTightens(applyAmendment(this.#effective, set), this.#effective, spent);
    const payload: AmendmentPayload = {
      grant: this.original.address,
      seq: this.length + 1,
      prev: this.head,
      responds_to: this.#lastCheckpointAddr ?? this.head,
      set,
      at_ms,
      by: issuer.did,
    };
    const env = signPayload(AMENDMENT_PAYLOAD_TYPE, payload, issuer);
    this.append(env);
    return env;
  }
}
