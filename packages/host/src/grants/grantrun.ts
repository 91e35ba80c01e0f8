// `sbx run --grant CHAIN` (jcp §4.2–§4.4 governing a run, sandbox-attest §4.3, §5): the chain is
// verified at start against the trusted roots, its leaf names the run's grant set (grants_id), the
// leaf's scope becomes the sandbox's only host paths (../../../../host/src/grants/scopes.ts), the
// smallest remaining budget along the chain is enforced while the unit runs (a live check of the
// meter, host/src/grants/live.ts), and the interval's energy is debited on the grant's spend ledger
// as a receipt signed by the host key, citing the interval's energy receipt and attestation.
import {
  grantsId,
  JcpError,
  verifyChain,
  type EffectiveGrant,
  type RevocationList,
  type SpendRequest,
} from "@sbx/jcp-grant/grant";
import { mapScope, refuseUnbounded, refuseUnsupported, requireWorkspace, type ScopeMap } from "./scopes.ts";
import { budgetWatch, periodFloorUj, type BudgetWatch } from "./live.ts";
import { loopbackPorts, startForwarders, type Forwarders } from "./netfwd.ts";
import { grantExecPolicy } from "./execscope.ts";
import { HostError } from "../errors.ts";
import { faultPoint } from "../store/index.ts";
import { gateUnavailableReason } from "../gate/index.ts";
import { policyAddress } from "@sbx/sandbox-attest/execpolicy";
import type { RunGate } from "../gate/index.ts";
import type { RunUnitResult } from "../run/index.ts";
import type { SandboxOptions } from "../sandbox/index.ts";

type ExtraBind = NonNullable<SandboxOptions["binds"]>[number];
import { payloadOf, type Digest, type Envelope, type KeyPair } from "@sbx/wire";
import { amendedLeaf } from "../ledger/index.ts";
import { spendOn, verifiedLedger } from "../ledger/index.ts";

/** What a run under a grant chain was given and saw. */
export interface GrantRun {
  readonly grantsId: Digest;
  /** The first chain (the only one unless --grant names a set). */
  readonly chain: readonly EffectiveGrant[];
  /** Every chain of the set, in the order given. */
  readonly chains: readonly (readonly EffectiveGrant[])[];
  readonly watch: BudgetWatch;
  /** The remaining budget (µJ) along the chain when the run started. */
  readonly startRemaining: bigint;
  /** The host loopback ports the grant lets the unit connect to. */
  readonly ports: readonly number[];
  /** Starts the port relays, if any; returns the sandbox options with the grant's binds. */
  open(): Promise<SandboxOptions>;
  /** Stops the port relays. */
  close(): Promise<void>;
  /** Debits the interval on the ledger; returns the spend's summary. */
  debit(r: RunUnitResult): GrantDebit;
  /**
   * The exec gate of the run (sandbox-attest §5.6 item 6): the leaf's /exec/<digest> resources as an
   * allowlist, composed with the run's own --exec-policy (`given`), or `given` itself when the leaf
   * names no exec resource. `GateUnavailable` when the grant restricts execution and the gate cannot
   * run here (the run is refused, never run ungated).
   */
  gateWith(given: RunGate | null): RunGate | null;
  /** The ledger as a durable run's debits use it (lifecycle/granted.ts); a set's chains included. */
  readonly ledger: GrantLedger;
}

/** A grant's ledger and chain, for a durable run that debits several intervals and idle energy. */
export interface GrantLedger {
  readonly path: string;
  /** The chain's envelopes, root first (the first chain of a set). */
  readonly envs: readonly Envelope[];
  /** Every chain of the run's grant set, in order (one for a chain file). */
  readonly set: readonly (readonly Envelope[])[];
  /**
   * Records one spend of energy already used (spendOn's refusals, never Overspend: jcp §4.3
   * "Overshoot", what is beyond the budget is recorded as the receipt's overshoot_uj); returns its
   * (last) receipt and what is left. Under a grant set the amount fills the chains in order as a
   * one-shot run's debit does, each share a receipt with the same cites; what no chain has room for
   * goes on the last, as its overshoot.
   */
  spend(req: SpendRequest): { receipt: Envelope; remaining_uj: bigint };
  /** The receipts on the ledger now, verified. */
  receipts(): readonly Envelope[];
  /** The chain verified now with the leaf in force (jcp §4.4, §4.5, §4.7): Revoked, Expired, …. */
  verifyNow(): void;
  /** The smallest remaining budget along the chain in force (µJ). */
  remaining(): bigint;
}

/** What the debit recorded. */
export interface GrantDebit {
  readonly ledger: string;
  readonly spent_uj: string;
  /** The (first) spend receipt. */
  readonly receipt: Envelope;
  /** Under a grant set: each chain's share of the interval, in the order debited. */
  readonly shares?: readonly { chain: number; leaf: Digest; uj: string }[];
  /** Under a grant set, when more than one chain was debited: every receipt, in that order. */
  readonly receipts?: readonly Envelope[];
  readonly remaining_uj: string;
  /** The µJ of the interval beyond the budget, recorded as the receipts' overshoot_uj (jcp §4.3). */
  readonly overshoot_uj: string;
  readonly retries: number;
  /** The live check's metering period, and the most one period added (the overshoot bound). */
  readonly period_ms: number;
  readonly max_period_uj: string;
}

// How much of `amount` (every remaining µJ when absent) each chain of a set takes, filling the chains
// in the order given: each takes what is left along its own path (its smallest remaining budget),
// counting what earlier chains took from a grant they share, never below zero.
function fill(
  chains: readonly (readonly EffectiveGrant[])[],
  used: (a: Digest) => bigint,
  amount?: bigint,
): bigint[] {
  const taken = new Map<Digest, bigint>();
  let rest = amount;
  return chains.map((c) => {
    let left: bigint | null = null;
    for (const g of c) {
      const l = g.budget.uj - used(g.address) - (taken.get(g.address) ?? 0n);
      if (left === null || l < left) left = l;
    }
    const room = left !== null && left > 0n ? left : 0n;
    const share = rest === undefined ? room : rest < room ? rest : room;
    if (rest !== undefined) rest -= share;
    for (const g of c) taken.set(g.address, (taken.get(g.address) ?? 0n) + share);
    return share;
  });
}

const sum = (xs: readonly bigint[]): bigint => xs.reduce((a, b) => a + b, 0n);

// The overshoot a spend receipt records (jcp §4.3), 0 when none.
function overshootOf(receipt: Envelope): bigint {
  const over = (payloadOf(receipt) as { overshoot_uj?: unknown }).overshoot_uj;
  return typeof over === "string" ? BigInt(over) : 0n;
}

/**
 * refuseBelowPeriod refuses (`BudgetExhausted`, jcp §4.3) to start work under grants with less left
 * than one metering period can use (periodFloorUj): its first period alone could pass the budget.
 */
export function refuseBelowPeriod(remaining: bigint, ledgerPath: string): void {
  const floor = periodFloorUj();
  if (remaining < floor)
    throw new HostError(
      "BudgetExhausted",
      `${String(remaining)} µJ left of the grants' budget on ${ledgerPath}, below the ${String(floor)} µJ one metering period can use`,
    );
}

// The union of the leaves' filesystem maps: the workspace writable when any leaf writes it,
// read-only when any reads it; a host path bound once (a leaf granting write on one is refused
// before this, refuseUnbounded).
function unionMap(leaves: readonly EffectiveGrant[], folder: string): ScopeMap {
  const maps = leaves.map((l) => mapScope(l.scope, folder));
  const ws = maps.some((m) => m.workspace === "rw")
    ? "rw"
    : maps.some((m) => m.workspace === "ro")
      ? "ro"
      : null;
  const binds = new Map<string, ExtraBind>();
  for (const m of maps)
    for (const b of m.binds) {
      const had = binds.get(b.host);
      binds.set(b.host, had ? { ...had, writable: had.writable || b.writable } : b);
    }
  return { workspace: ws, binds: [...binds.values()], unmapped: maps.flatMap((m) => m.unmapped) };
}

/**
 * The terms a unit runs under (jcp §4.2–§4.7), already read: the chains (root first; several for a
 * grant set), the trusted roots, the metering hosts whose receipts the ledger holds (this host's
 * first), the spend ledger's folder, the revocation list as read at each check, and the leaf's
 * checkpoint log (one chain only), read again at every metering period.
 */
export interface GrantTerms {
  readonly chains: readonly (readonly Envelope[])[];
  readonly roots: readonly string[];
  readonly hosts: readonly string[];
  readonly ledger: string;
  readonly revocations?: () => RevocationList | undefined;
  readonly amendments?: string;
}

/**
 * openGrantRun opens a unit's run under `t` (GrantTerms) on this host, signing debits with
 * `hostKey`: verifyChain's codes for a chain that does not verify now; `BadGrantSet` for a set that
 * names a leaf twice or an amendment log beside a set; `ResourceUnsupported` for a resource the host
 * does not enforce; `DiskLimitUnavailable` for a writable host folder besides the workspace (no
 * kernel bound, scopes.ts refuseUnbounded); `GrantsInsufficient` when the leaves do not
 * give the workspace; `BudgetExhausted` when nothing is left to spend. Under a grant set (several
 * chains) grants_id binds every leaf (jcp §4.1 grant sets), each chain's leaf governs its own
 * resources (the union is what the sandbox reaches), and the budget is what is left along the chains
 * filled in order, each interval's energy debited on them in that order (sandbox-attest §5.6 item 7).
 */
export function openGrantRun(t: GrantTerms, hostKey: KeyPair, sandbox: SandboxOptions): GrantRun {
  if (t.chains.length === 0) throw new RangeError("openGrantRun: no chain");
  const roots = [...t.roots];
  const hosts = [...t.hosts];
  const ledgerPath = t.ledger;
  const envSet = t.chains;
  const amendments = t.amendments;
  if (amendments !== undefined && envSet.length > 1)
    throw new HostError("BadGrantSet", "an amendment log is of one chain's leaf: the grants are a set");
  const revocations = t.revocations?.();
  const opts = { roots, hosts, ...(revocations ? { revocations } : {}) };
  const at_ms = Date.now();
  const chains = envSet.map(
    (envs) => verifyChain(envs, { roots, at_ms, ...(revocations ? { revocations } : {}) }).grants,
  );
  const leaves = chains.map((g) => g[g.length - 1]!);
  if (new Set(leaves.map((l) => l.address)).size !== leaves.length)
    throw new HostError("BadGrantSet", "a grant set names each leaf once");
  const envs = envSet[0]!;
  const grants = chains[0]!;
  const folder = sandbox.workspaceFolder ?? "/work";
  refuseUnsupported(
    leaves.map((l) => l.scope),
    folder,
  );
  refuseUnbounded(
    leaves.map((l) => l.scope),
    folder,
  );
  const map = unionMap(leaves, folder);
  const mode = requireWorkspace(map, folder);
  // The chains in force now: a single chain's leaf as its issuer's amendments leave it (jcp §4.7).
  const inForce = (): readonly (readonly EffectiveGrant[])[] =>
    amendments === undefined ? chains : [[...grants.slice(0, -1), amendedLeaf(envs, amendments)]];
  const remainingNow = (): bigint => {
    const { ledger } = verifiedLedger(ledgerPath, opts);
    return sum(fill(inForce(), (a) => ledger.used(a).uj));
  };
  const startRemaining = remainingNow();
  refuseBelowPeriod(startRemaining, ledgerPath);
  // Fail closed: a ledger that cannot be read while the unit runs leaves it no budget.
  const watch = budgetWatch(() => {
    try {
      return remainingNow();
    } catch {
      return 0n;
    }
  });
  const ports = [...new Set(leaves.flatMap((l) => loopbackPorts(l.scope)))].sort((a, b) => a - b);
  let fwd: Forwarders | null = null;
  const base: SandboxOptions = { ...sandbox, binds: map.binds, workspaceReadOnly: mode === "ro" };
  const ledger: GrantLedger = {
    path: ledgerPath,
    envs,
    set: envSet,
    spend(req) {
      if (envSet.length === 1) {
        const capped = { ...req, cap: true };
        const { state, receipt } = spendOn(ledgerPath, envs, hostKey, capped, opts, () => Date.now());
        return { receipt, remaining_uj: sum(fill(inForce(), (a) => state.ledger.used(a).uj)) };
      }
      const total = BigInt(req.uj);
      const before = verifiedLedger(ledgerPath, opts).ledger;
      const shares = fill(inForce(), (a) => before.used(a).uj, total);
      shares[shares.length - 1] = shares[shares.length - 1]! + total - sum(shares);
      let spends = shares.map((share, i) => ({ i, share })).filter((x) => x.share > 0n);
      if (spends.length === 0) spends = [{ i: 0, share: 0n }];
      let done: ReturnType<typeof spendOn> | null = null;
      for (const [k, { i, share }] of spends.entries()) {
        if (k > 0) faultPoint("grant:share-debited"); // crash tests: an earlier chain's share recorded
        const capped = { ...req, uj: share.toString(), cap: true };
        done = spendOn(ledgerPath, envSet[i]!, hostKey, capped, opts, () => Date.now());
      }
      const after = done!.state.ledger;
      return { receipt: done!.receipt, remaining_uj: sum(fill(inForce(), (a) => after.used(a).uj)) };
    },
    receipts: () => verifiedLedger(ledgerPath, opts).ledger.receipts,
    verifyNow() {
      // The revocation list is read again: a revocation after the run started counts.
      const now = t.revocations?.();
      for (const c of envSet)
        verifyChain(c, { roots, at_ms: Date.now(), ...(now ? { revocations: now } : {}) });
      for (const c of inForce()) {
        const leaf = c[c.length - 1]!;
        if (Date.now() >= leaf.exp_ms)
          throw new JcpError("Expired", `the grant in force expired at ${String(leaf.exp_ms)}`);
      }
    },
    remaining: remainingNow,
  };
  return {
    ledger,
    grantsId: grantsId(leaves.map((l) => l.address)),
    chain: grants,
    chains,
    watch,
    startRemaining,
    ports,
    async open() {
      if (ports.length === 0) return base;
      fwd = await startForwarders(ports);
      return { ...base, binds: [...map.binds, fwd.bind], wrap: fwd.wrap, relayedPorts: ports };
    },
    async close() {
      await fwd?.stop();
    },
    gateWith(given) {
      const execPolicy = grantExecPolicy(
        leaves.map((l) => l.scope),
        given?.execPolicy ?? null,
      );
      if (execPolicy === null || execPolicy === given?.execPolicy) return given;
      const why = gateUnavailableReason();
      if (why !== null)
        throw new HostError("GateUnavailable", `the grant names the programs the unit may run: ${why}`);
      return { execPolicy, policy: policyAddress(execPolicy) };
    },
    debit(r) {
      const uj = r.receipt.receipt.total_uj;
      const total = BigInt(uj);
      const wall_ms = r.interval.end_ms - r.interval.start_ms;
      const cites = { attestation: r.address, energy: r.receiptAddress };
      // Shares in the order of the chains; what no chain has room for goes on the last one, which
      // debits what is left and records the rest as its overshoot (jcp §4.3).
      const before = verifiedLedger(ledgerPath, opts).ledger;
      const shares = fill(inForce(), (a) => before.used(a).uj, total);
      shares[shares.length - 1] = shares[shares.length - 1]! + total - sum(shares);
      let spends = shares.map((share, i) => ({ i, share })).filter((x) => x.share > 0n);
      if (spends.length === 0) spends = [{ i: 0, share: 0n }];
      const receipts: Envelope[] = [];
      let retries = 0;
      let state: ReturnType<typeof verifiedLedger> | null = null;
      for (const { i, share } of spends) {
        const req = { uj: share.toString(), wall_ms, calls: 1, cites, cap: true };
        const done = spendOn(ledgerPath, envSet[i]!, hostKey, req, opts, () => Date.now());
        receipts.push(done.receipt);
        retries += done.retries;
        state = done.state;
      }
      const after = state!.ledger;
      const left = sum(fill(inForce(), (a) => after.used(a).uj));
      return {
        ledger: ledgerPath,
        spent_uj: uj,
        receipt: receipts[0]!,
        ...(envSet.length > 1
          ? {
              shares: spends.map(({ i, share }) => ({
                chain: i + 1,
                leaf: leaves[i]!.address,
                uj: share.toString(),
              })),
            }
          : {}),
        ...(receipts.length > 1 ? { receipts } : {}),
        remaining_uj: left.toString(),
        overshoot_uj: sum(receipts.map(overshootOf)).toString(),
        retries,
        period_ms: watch.periodMs,
        max_period_uj: watch.maxPeriodUj().toString(),
      };
    },
  };
}
